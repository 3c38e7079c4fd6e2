package backend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// responseShape is the JSON object request.respond takes for one request
// kind: its keys, exactly as spelled, and the ones that must be present.
type responseShape struct {
	keys     []string
	required []string
	want     string // for the error message
}

var responseShapes = map[string]responseShape{
	store.KindApproval:  {keys: []string{"outcome", "note"}, required: []string{"outcome"}, want: "{outcome, note?}"},
	store.KindQuestion:  {keys: []string{"answer"}, required: []string{"answer"}, want: "{answer}"},
	store.KindPlan:      {keys: []string{"approved", "feedback"}, required: []string{"approved"}, want: "{approved, feedback?}"},
	store.KindDirectory: {keys: []string{"granted", "path", "writable"}, required: []string{"granted"}, want: "{granted, path?, writable?}"},

	store.KindElicitation: {keys: []string{"action", "content"}, required: []string{"action"}, want: "{action, content?}"},
}

// validateResponse checks a response against its request before it is
// stored: the object must have the shape of the request's kind (no unknown,
// case-variant, duplicate or missing keys, right types), and always_command
// is refused when the request did not offer it. The error names the field.
func validateResponse(req store.PendingRequest, raw json.RawMessage) error {
	shape, ok := responseShapes[req.Kind]
	if !ok {
		return nil
	}
	keys, err := objectKeys(raw)
	if err != nil {
		return protocol.InvalidField("response", fmt.Sprintf("must be a JSON object %s for %s requests: %v", shape.want, req.Kind, err))
	}
	for k, v := range keys {
		if !slices.Contains(shape.keys, k) {
			return protocol.InvalidField("response."+k, fmt.Sprintf("unknown field for %s requests (want %s)", req.Kind, shape.want))
		}
		if slices.Contains(shape.required, k) && bytes.Equal(v, []byte("null")) {
			delete(keys, k)
		}
	}
	for _, k := range shape.required {
		if _, ok := keys[k]; !ok {
			return protocol.InvalidField("response."+k, fmt.Sprintf("required for %s requests (want %s)", req.Kind, shape.want))
		}
	}
	switch req.Kind {
	case store.KindApproval:
		var r protocol.ApprovalResponse
		if err := protocol.DecodeParams(raw, &r); err != nil {
			return prefixField(err)
		}
		o, err := permission.ParseOutcome(r.Outcome)
		if err != nil {
			return protocol.InvalidField("response.outcome", "must be once, always_tool, always_command or deny")
		}
		if r.Note != "" && o != permission.OutcomeDeny {
			return protocol.InvalidField("response.note", "a note goes with outcome deny only (it tells the model why)")
		}
		if len(r.Note) > protocol.MaxDenyNoteBytes {
			return protocol.InvalidField("response.note", fmt.Sprintf("is %d bytes; at most %d", len(r.Note), protocol.MaxDenyNoteBytes))
		}
		if o == permission.OutcomeAlwaysCommand {
			return alwaysCommandOffered(req.Data)
		}
	case store.KindQuestion:
		var r protocol.QuestionResponse
		return prefixField(protocol.DecodeParams(raw, &r))
	case store.KindPlan:
		var r protocol.PlanResponse
		return prefixField(protocol.DecodeParams(raw, &r))
	case store.KindDirectory:
		var r protocol.DirectoryResponse
		return prefixField(protocol.DecodeParams(raw, &r))
	case store.KindElicitation:
		return validateElicitation(req, raw) // elicitation.go
	}
	return nil
}

// alwaysCommandOffered reports (as an error) when a permission_required
// event did not offer always_command: its command is empty.
func alwaysCommandOffered(event json.RawMessage) error {
	var d struct {
		Name    string `json:"name"`
		Command string `json:"command"`
		Note    string `json:"alwaysCommandNote"`
	}
	_ = json.Unmarshal(event, &d)
	if d.Command != "" {
		return nil
	}
	why := d.Note
	if why == "" {
		why = "the request offers no command grant"
	}
	return protocol.InvalidField("response.outcome", fmt.Sprintf("always_command is not offered for this %s call: %s; answer once, always_tool or deny", d.Name, why))
}

func prefixField(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w (in response)", err)
}

// objectKeys returns the top-level keys of a JSON object and their raw
// values; a duplicate key is an error.
func objectKeys(raw json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		for seen := range out {
			if strings.EqualFold(seen, k) {
				return nil, fmt.Errorf("keys %q and %q differ only in case", seen, k)
			}
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}
