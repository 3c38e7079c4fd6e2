package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxArgsDepth bounds the nesting of a call's arguments.
const maxArgsDepth = 64

// Args is one tool call's arguments, decoded once and strictly (see
// NormalizeArgs). Map and Canonical hold the same value: Canonical is
// json.Marshal(Map), which is what the handler receives, what the approval
// card shows and what the permission engine decided on.
type Args struct {
	// Map is the decoded object. Values are string, json.Number, bool, nil,
	// []any and map[string]any.
	Map map[string]any
	// Canonical is the compact re-encoding with keys sorted.
	Canonical json.RawMessage
}

// Unknown says what NormalizeArgs does with a key the schema does not list.
type Unknown int

const (
	// RefuseUnknown refuses any key not in the schema's properties, unless
	// the schema allows additional properties explicitly (true or a schema)
	// or is an object schema without "properties" (free-form). The mode of
	// the builtin and host tools.
	RefuseUnknown Unknown = iota
	// SchemaUnknown follows JSON Schema: unknown keys are refused only when
	// additionalProperties is false. The mode of MCP servers' tools.
	SchemaUnknown
)

// NormalizeArgs decodes a model's arguments once, strictly, against the
// tool's parameters schema. It refuses, at every depth, a key given twice
// and two keys that differ only in case (Unicode simple folding, as
// encoding/json's field matching uses); against the schema it refuses a key
// that differs only in case from a property, unknown keys (see Unknown),
// values of the wrong type and missing required keys. Errors wrap
// ErrInvalidArgs and name the key. An empty string or "null" is an empty
// object, and an object wrapped in a JSON string is unwrapped once, as
// DecodeArgs does.
func NormalizeArgs(raw, schema json.RawMessage, unknown Unknown) (Args, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return Args{}, fmt.Errorf("%w: %v", ErrInvalidArgs, err)
		}
		raw = bytes.TrimSpace([]byte(inner))
		if len(raw) == 0 {
			raw = []byte("{}")
		}
	}
	if raw[0] != '{' {
		return Args{}, fmt.Errorf("%w: arguments must be a JSON object", ErrInvalidArgs)
	}
	v, err := decodeStrict(raw)
	if err != nil {
		return Args{}, err
	}
	obj := v.(map[string]any)
	var s *schemaNode
	if len(bytes.TrimSpace(schema)) > 0 {
		s = new(schemaNode)
		_ = json.Unmarshal(schema, s) // never fails: see UnmarshalJSON
	}
	if err := s.check("", obj, unknown); err != nil {
		return Args{}, err
	}
	canon, err := json.Marshal(obj)
	if err != nil {
		return Args{}, fmt.Errorf("%w: %v", ErrInvalidArgs, err)
	}
	return Args{Map: obj, Canonical: canon}, nil
}

// decodeStrict parses one JSON value with numbers kept as json.Number,
// refusing duplicate and case-variant keys in every object and any data
// after the value.
func decodeStrict(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the arguments object", ErrInvalidArgs)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, path string, depth int) (any, error) {
	if depth > maxArgsDepth {
		return nil, fmt.Errorf("%w: arguments nested deeper than %d levels", ErrInvalidArgs, maxArgsDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArgs, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalidArgs, err)
			}
			k := kt.(string)
			if _, dup := obj[k]; dup {
				return nil, fmt.Errorf("%w: key %q is given twice", ErrInvalidArgs, joinPath(path, k))
			}
			for other := range obj {
				if strings.EqualFold(other, k) {
					return nil, fmt.Errorf("%w: keys %q and %q differ only in case", ErrInvalidArgs, joinPath(path, other), joinPath(path, k))
				}
			}
			v, err := decodeValue(dec, joinPath(path, k), depth+1)
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidArgs, err)
		}
		return obj, nil
	case '[':
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, fmt.Sprintf("%s[%d]", path, len(arr)), depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidArgs, err)
		}
		return arr, nil
	}
	return nil, fmt.Errorf("%w: unexpected %v", ErrInvalidArgs, d)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// schemaNode is the part of JSON Schema NormalizeArgs checks.
type schemaNode struct {
	Type                 json.RawMessage        `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	Items                json.RawMessage        `json:"items"`
	Required             []string               `json:"required"`
}

// UnmarshalJSON reads the fields it knows one by one; a boolean schema, a
// schema that is not an object, or a field of an unexpected shape (an MCP
// server's schema is outside input) constrains nothing rather than failing
// every call. Duplicate and case-variant keys are refused by the decoder
// whatever the schema.
func (s *schemaNode) UnmarshalJSON(b []byte) error {
	*s = schemaNode{}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return nil
	}
	s.Type = fields["type"]
	s.AdditionalProperties = fields["additionalProperties"]
	s.Items = fields["items"]
	_ = json.Unmarshal(fields["required"], &s.Required)
	if raw, ok := fields["properties"]; ok {
		var props map[string]json.RawMessage
		if json.Unmarshal(raw, &props) == nil {
			s.Properties = make(map[string]*schemaNode, len(props))
			for k, v := range props {
				n := new(schemaNode)
				_ = json.Unmarshal(v, n)
				s.Properties[k] = n
			}
		}
	}
	return nil
}

// types returns the schema's type names ("" type: any).
func (s *schemaNode) types() []string {
	if s == nil || len(s.Type) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many)
	return many
}

// check validates v against s; a nil s accepts any value (its objects were
// already checked for duplicate and case-variant keys by the decoder).
func (s *schemaNode) check(path string, v any, unknown Unknown) error {
	if s == nil {
		return nil
	}
	if ts := s.types(); len(ts) > 0 && !slices.ContainsFunc(ts, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%w: key %q: expected %s, got %s", ErrInvalidArgs, pathName(path), strings.Join(ts, " or "), typeName(v))
	}
	switch v := v.(type) {
	case map[string]any:
		return s.checkObject(path, v, unknown)
	case []any:
		var items *schemaNode
		if len(s.Items) > 0 && s.Items[0] == '{' {
			items = new(schemaNode)
			_ = json.Unmarshal(s.Items, items)
		}
		for i, x := range v {
			if err := items.check(fmt.Sprintf("%s[%d]", path, i), x, unknown); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *schemaNode) checkObject(path string, obj map[string]any, unknown Unknown) error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first offending key in a stable order
	for _, k := range keys {
		prop, ok := s.Properties[k]
		if !ok {
			for name := range s.Properties {
				if strings.EqualFold(name, k) {
					return fmt.Errorf("%w: key %q differs only in case from %q", ErrInvalidArgs, joinPath(path, k), joinPath(path, name))
				}
			}
			if !s.allowsAdditional(unknown) {
				return fmt.Errorf("%w: unknown key %q", ErrInvalidArgs, joinPath(path, k))
			}
			continue
		}
		if obj[k] == nil && !slices.Contains(s.Required, k) {
			continue // an optional key given as null is as if absent
		}
		if err := prop.check(joinPath(path, k), obj[k], unknown); err != nil {
			return err
		}
	}
	for _, r := range s.Required {
		if _, ok := obj[r]; !ok {
			return fmt.Errorf("%w: missing required key %q", ErrInvalidArgs, joinPath(path, r))
		}
	}
	return nil
}

// allowsAdditional reports whether keys outside the properties are allowed.
func (s *schemaNode) allowsAdditional(unknown Unknown) bool {
	ap := bytes.TrimSpace(s.AdditionalProperties)
	switch {
	case bytes.Equal(ap, []byte("false")):
		return false
	case len(ap) > 0:
		return true // true or a schema
	case unknown == SchemaUnknown, s.Properties == nil:
		return true // an object schema that lists no properties is free-form
	}
	return false
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return true // a type this checker does not know: not its call
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func pathName(path string) string {
	if path == "" {
		return "(arguments)"
	}
	return path
}

// NormalizeArgs is the package's NormalizeArgs with the tool's own schema:
// tools of MCP servers (Source "mcp" or "mcp:<server>") follow JSON Schema
// for unknown keys (SchemaUnknown), every other tool refuses them.
func (s Spec) NormalizeArgs(raw json.RawMessage) (Args, error) {
	unknown := RefuseUnknown
	if s.Source == "mcp" || strings.HasPrefix(s.Source, "mcp:") {
		unknown = SchemaUnknown
	}
	return NormalizeArgs(raw, s.Schema.Function.Parameters, unknown)
}
