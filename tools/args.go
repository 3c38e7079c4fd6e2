package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeArgs parses a model's arguments into v. An empty string or "null" is
// an empty object. Models sometimes wrap the object in a JSON string
// ("{\"path\":\"a\"}"); that is unwrapped once. Unknown fields are ignored;
// type mismatches name the field. Handlers use it on Call.Args, which the
// engine has already normalized (NormalizeArgs), so its case-insensitive
// field matching sees no duplicate or case-variant keys.
func DecodeArgs(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidArgs, err)
		}
		raw = bytes.TrimSpace([]byte(inner))
		if len(raw) == 0 {
			raw = []byte("{}")
		}
	}
	if raw[0] != '{' {
		return fmt.Errorf("%w: arguments must be a JSON object", ErrInvalidArgs)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			return fmt.Errorf("%w: field %q: expected %s, got %s", ErrInvalidArgs, te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("%w: %v", ErrInvalidArgs, err)
	}
	return nil
}

// ArgsMap parses arguments leniently into a generic map (duplicate keys:
// the last wins). Unparseable arguments come back as {"_raw": "..."}. Never
// decide on its result: the engine's decisions, cards and handlers use
// NormalizeArgs.
func ArgsMap(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if err := DecodeArgs(raw, &m); err != nil {
		return map[string]any{"_raw": string(raw)}
	}
	return m
}
