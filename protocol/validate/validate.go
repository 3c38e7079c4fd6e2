// Package validate checks frames against protocol/schema.json with
// github.com/santhosh-tekuri/jsonschema/v6: the envelope of every frame, a
// response's result against its method's result type, an error against
// the error object (error.data included), and a notification's params
// against its notification's type (session.event's data against its event
// type's). The end-to-end tests run every frame the sidecar sends through
// it (ipc/client's Options.Check).
//
// The schema is open to what a newer sidecar of the same protocol version
// may add (ui-protocol.md §3, "What may change within version 1"). A
// Validator reads it in one of two modes: Exact (New) holds frames to
// exactly what the schema lists, the way the sidecar's own tests check this
// build's frames, so that the sidecar and its schema cannot drift apart;
// Client (NewClient) reads it as a client must, letting those additions
// through.
//
// A Validator is safe for concurrent use.
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zqagent/sidecar/protocol"
)

// Mode is how a Validator reads the schema's openness.
type Mode int

const (
	// Exact reads the schema closed: an object member it does not list, an
	// event type, request kind, feature or error kind it does not list, and
	// a notification it does not have are errors.
	Exact Mode = iota
	// Client reads the schema as it is, as a client of the same protocol
	// version does: a newer sidecar's new members, event types, request
	// kinds, features, error kinds and notifications pass (a notification
	// the schema does not have gets its envelope checked only).
	Client
)

// Validator holds the compiled schemas of one schema document.
type Validator struct {
	mode          Mode
	results       map[string]*jsonschema.Schema // method → result
	params        map[string]*jsonschema.Schema // method → params
	notifications map[string]*jsonschema.Schema // method → params
	events        map[string]*jsonschema.Schema // event type → data
	response      *jsonschema.Schema
	errResponse   *jsonschema.Schema
	notification  *jsonschema.Schema
}

// New compiles protocol.Schema in Exact mode: for the sidecar's own frames.
func New() (*Validator, error) { return Compile(protocol.Schema, Exact) }

// NewClient compiles protocol.Schema in Client mode: for the frames of any
// sidecar of the protocol versions it describes, this one or a newer one.
func NewClient() (*Validator, error) { return Compile(protocol.Schema, Client) }

// Compile compiles a schema document laid out like protocol/schema.json.
func Compile(schema []byte, mode Mode) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	if mode == Exact {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("parse schema: not an object")
		}
		m["$defs"] = closed(m["$defs"])
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
	v := &Validator{mode: mode, results: map[string]*jsonschema.Schema{}, params: map[string]*jsonschema.Schema{}, notifications: map[string]*jsonschema.Schema{}, events: map[string]*jsonschema.Schema{}}
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
		if sch == nil && v.mode == Client {
			return nil // newer than the schema: the envelope only
		}
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
		return nil // the params' schema decides on a type it does not list
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

// closed returns a schema read closed (Exact): the shapes that open the
// schema to additions (protocol/internal/schemagen's open.go) are turned
// back. An object with properties and no additionalProperties (nor
// unevaluatedProperties) gets additionalProperties: false; {anyOf: [{$ref:
// E}, {type: string}]} becomes {$ref: E}; a oneOf variant for an unknown
// discriminator ({properties: {k: {not: …}, …}}) is dropped.
func closed(node any) any {
	switch n := node.(type) {
	case []any:
		for i, c := range n {
			n[i] = closed(c)
		}
		return n
	case map[string]any:
		if variants, ok := n["oneOf"].([]any); ok {
			n["oneOf"] = slices.DeleteFunc(variants, otherVariant)
		}
		if ref, ok := openEnum(n["anyOf"]); ok {
			delete(n, "anyOf")
			n["$ref"] = ref
		}
		_, hasProps := n["properties"]
		_, hasAdditional := n["additionalProperties"]
		_, hasUnevaluated := n["unevaluatedProperties"]
		if n["type"] == "object" && hasProps && !hasAdditional && !hasUnevaluated {
			n["additionalProperties"] = false
		}
		for k, c := range n {
			n[k] = closed(c)
		}
		return n
	}
	return node
}

// otherVariant: a oneOf variant for a discriminator value the schema does
// not list, {properties: {k: {not: …}, …}}.
func otherVariant(v any) bool {
	m, _ := v.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	for _, p := range props {
		pm, _ := p.(map[string]any)
		if _, not := pm["not"]; not && len(pm) == 1 {
			return true
		}
	}
	return false
}

// openEnum: [{$ref: E}, {type: string}] gives E's $ref.
func openEnum(anyOf any) (string, bool) {
	list, _ := anyOf.([]any)
	if len(list) != 2 {
		return "", false
	}
	known, _ := list[0].(map[string]any)
	other, _ := list[1].(map[string]any)
	ref, _ := known["$ref"].(string)
	if len(known) != 1 || ref == "" || len(other) != 1 || other["type"] != "string" {
		return "", false
	}
	return ref, true
}
