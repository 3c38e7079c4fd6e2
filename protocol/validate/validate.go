// Package validate checks frames against protocol/schema.json with
// github.com/santhosh-tekuri/jsonschema/v6: the envelope of every frame, a
// response's result against its method's result type, an error against
// the error object (error.data included), and a notification's params
// against its notification's type (session.event's data against its event
// type's). The end-to-end tests run every frame the sidecar sends through
// it (ipc/client's Options.Check).
//
// A Validator is safe for concurrent use.
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zqagent/sidecar/protocol"
)

// Validator holds the compiled schemas of one schema document.
type Validator struct {
	results       map[string]*jsonschema.Schema // method → result
	params        map[string]*jsonschema.Schema // method → params
	notifications map[string]*jsonschema.Schema // method → params
	events        map[string]*jsonschema.Schema // event type → data
	response      *jsonschema.Schema
	errResponse   *jsonschema.Schema
	notification  *jsonschema.Schema
}

// New compiles protocol.Schema.
func New() (*Validator, error) { return Compile(protocol.Schema) }

// Compile compiles a schema document laid out like protocol/schema.json.
func Compile(schema []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	var layout struct {
		ID      string `json:"$id"`
		Methods map[string]struct {
			Params, Result struct {
				Ref string `json:"$ref"`
			}
		} `json:"methods"`
		Notifications map[string]struct {
			Params struct {
				Ref string `json:"$ref"`
			}
		} `json:"notifications"`
		Events map[string]struct {
			Ref string `json:"$ref"`
		} `json:"events"`
		Frames map[string]struct {
			Ref string `json:"$ref"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(schema, &layout); err != nil {
		return nil, fmt.Errorf("read schema layout: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	if err := c.AddResource(layout.ID, doc); err != nil {
		return nil, err
	}
	compile := func(ref string) (*jsonschema.Schema, error) {
		if !strings.HasPrefix(ref, "#/") {
			return nil, fmt.Errorf("ref %q is not local", ref)
		}
		return c.Compile(layout.ID + ref)
	}
	v := &Validator{results: map[string]*jsonschema.Schema{}, params: map[string]*jsonschema.Schema{}, notifications: map[string]*jsonschema.Schema{}, events: map[string]*jsonschema.Schema{}}
	for m, refs := range layout.Methods {
		if v.params[m], err = compile(refs.Params.Ref); err != nil {
			return nil, fmt.Errorf("%s params: %w", m, err)
		}
		if v.results[m], err = compile(refs.Result.Ref); err != nil {
			return nil, fmt.Errorf("%s result: %w", m, err)
		}
	}
	for m, refs := range layout.Notifications {
		if v.notifications[m], err = compile(refs.Params.Ref); err != nil {
			return nil, fmt.Errorf("%s params: %w", m, err)
		}
	}
	for typ, ref := range layout.Events {
		if v.events[typ], err = compile(ref.Ref); err != nil {
			return nil, fmt.Errorf("event %s data: %w", typ, err)
		}
	}
	for name, dst := range map[string]**jsonschema.Schema{"response": &v.response, "errorResponse": &v.errResponse, "notification": &v.notification} {
		if *dst, err = compile(layout.Frames[name].Ref); err != nil {
			return nil, fmt.Errorf("frame %s: %w", name, err)
		}
	}
	return v, nil
}

// ErrUnknownMethod is a response to, or a notification of, a method the
// schema does not have.
var ErrUnknownMethod = errors.New("method not in the schema")

// Frame validates a frame the sidecar sent. method is the method of the
// request a response answers, "" when it is not known (a null id, a
// batch's element): then only the envelope of a result is checked. A batch
// (an array) is checked element by element.
func (v *Validator) Frame(method string, frame []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(frame))
	if err != nil {
		return fmt.Errorf("frame is not JSON: %w", err)
	}
	if arr, ok := inst.([]any); ok {
		for i, el := range arr {
			if err := v.value("", el); err != nil {
				return fmt.Errorf("batch[%d]: %w", i, err)
			}
		}
		return nil
	}
	return v.value(method, inst)
}

func (v *Validator) value(method string, inst any) error {
	obj, ok := inst.(map[string]any)
	if !ok {
		return fmt.Errorf("frame is not an object")
	}
	switch {
	case obj["method"] != nil:
		name, _ := obj["method"].(string)
		if err := v.notification.Validate(obj); err != nil {
			return fmt.Errorf("notification %s: %w", name, err)
		}
		sch := v.notifications[name]
		if sch == nil {
			return fmt.Errorf("notification %q: %w", name, ErrUnknownMethod)
		}
		if err := v.eventData(obj["params"]); err != nil {
			return err
		}
		if err := sch.Validate(obj["params"]); err != nil {
			return fmt.Errorf("notification %s params: %w", name, err)
		}
		return nil
	case obj["error"] != nil:
		if err := v.errResponse.Validate(obj); err != nil {
			return fmt.Errorf("error response to %s: %w", orUnknown(method), err)
		}
		return nil
	}
	if err := v.response.Validate(obj); err != nil {
		return fmt.Errorf("response to %s: %w", orUnknown(method), err)
	}
	if method == "" {
		return nil
	}
	sch := v.results[method]
	if sch == nil {
		return fmt.Errorf("response to %q: %w", method, ErrUnknownMethod)
	}
	if err := sch.Validate(obj["result"]); err != nil {
		return fmt.Errorf("%s result: %w", method, err)
	}
	return nil
}

// eventData checks a session.event's data against its type's schema
// first: the error then names the one type, where the oneOf of the whole
// params would list every type's mismatch.
func (v *Validator) eventData(params any) error {
	p, ok := params.(map[string]any)
	if !ok {
		return nil
	}
	typ, _ := p["type"].(string)
	sch := v.events[typ]
	if sch == nil {
		return nil // the params' schema reports an unknown type
	}
	if err := sch.Validate(p["data"]); err != nil {
		return fmt.Errorf("session.event %s data: %w", typ, err)
	}
	return nil
}

// Params validates a method's params (what a client sends).
func (v *Validator) Params(method string, params []byte) error {
	sch := v.params[method]
	if sch == nil {
		return fmt.Errorf("%q: %w", method, ErrUnknownMethod)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return fmt.Errorf("%s params are not JSON: %w", method, err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s params: %w", method, err)
	}
	return nil
}

func orUnknown(method string) string {
	if method == "" {
		return "an unknown request"
	}
	return method
}
