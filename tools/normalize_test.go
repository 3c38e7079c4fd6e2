package tools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const shellSchema = `{"type":"object","properties":{
  "command":{"type":"string"},"cwd":{"type":"string"},"timeout_ms":{"type":"integer"},"background":{"type":"boolean"},
  "todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"}},"required":["content"],"additionalProperties":false}},
  "meta":{"type":"object"}},
  "required":["command"],"additionalProperties":false}`

func TestNormalizeArgs(t *testing.T) {
	cases := []struct {
		in, canon, wantErr string
		unknown            Unknown
	}{
		{in: `{"command":"ls"}`, canon: `{"command":"ls"}`},
		{in: `  {"timeout_ms":5,"command":"ls"} `, canon: `{"command":"ls","timeout_ms":5}`},
		{in: `"{\"command\":\"wrapped\"}"`, canon: `{"command":"wrapped"}`},
		{in: `{"command":"a<b&c"}`, canon: `{"command":"a\u003cb\u0026c"}`},
		{in: `{"command":"ls","cwd":null}`, canon: `{"command":"ls","cwd":null}`},
		{in: `{"command":"ls","timeout_ms":12345678901234567890123}`, wantErr: `key "timeout_ms": expected integer`},
		{in: `{"command":"ls","meta":{"a":{"b":[1,2.5,"x"]}}}`, canon: `{"command":"ls","meta":{"a":{"b":[1,2.5,"x"]}}}`},
		{in: `{"command":"echo hello","Command":"touch pwned"}`, wantErr: `keys "command" and "Command" differ only in case`},
		{in: `{"Command":"touch pwned"}`, wantErr: `key "Command" differs only in case from "command"`},
		{in: `{"command":"a","command":"b"}`, wantErr: `key "command" is given twice`},
		{in: `{"command":"a","cwd":"x","CWD":"y"}`, wantErr: `differ only in case`},
		{in: "{\"command\":\"a\",\"\u212aey\":1,\"key\":2}", wantErr: `differ only in case`, unknown: SchemaUnknown},
		{in: `{"command":"a","meta":{"x":1,"X":2}}`, wantErr: `keys "meta.x" and "meta.X"`},
		{in: `{"command":"a","todos":[{"content":"x","Content":"y"}]}`, wantErr: `todos[0]`},
		{in: `{"command":"a","todos":[{"content":"x","extra":1}]}`, wantErr: `unknown key "todos[0].extra"`},
		{in: `{"command":"a","todos":[{}]}`, wantErr: `missing required key "todos[0].content"`},
		{in: `{"command":"ls","extra":true}`, wantErr: `unknown key "extra"`},
		{in: `{"command":["ls"]}`, wantErr: `key "command": expected string, got an array`},
		{in: `{"command":"ls","background":"yes"}`, wantErr: `key "background": expected boolean`},
		{in: `{"command":"ls","timeout_ms":1.5}`, wantErr: `expected integer`},
		{in: `{}`, wantErr: `missing required key "command"`},
		{in: `[1]`, wantErr: `must be a JSON object`},
		{in: `{"command":"ls"} {"command":"rm"}`, wantErr: `data after`},
		{in: `{"command":"ls"`, wantErr: `invalid arguments`},
		{in: strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100), wantErr: `nested deeper`, unknown: SchemaUnknown},
	}
	for _, tc := range cases {
		schema := shellSchema
		if tc.unknown == SchemaUnknown {
			schema = ""
		}
		a, err := NormalizeArgs(json.RawMessage(tc.in), json.RawMessage(schema), tc.unknown)
		if tc.wantErr != "" {
			if err == nil || !errors.Is(err, ErrInvalidArgs) || !strings.Contains(err.Error(), tc.wantErr) || ErrorType(err) != "invalid_arguments" {
				t.Errorf("NormalizeArgs(%s) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(a.Canonical) != tc.canon {
			t.Errorf("NormalizeArgs(%s) = %s, %v; want %s", tc.in, a.Canonical, err, tc.canon)
			continue
		}
		again, _ := json.Marshal(a.Map)
		if string(again) != tc.canon {
			t.Errorf("Map re-encodes to %s, want %s", again, tc.canon)
		}
	}
}

// TestNormalizeArgsOddSchemas: an MCP server's schema is outside input; a
// shape this checker does not expect constrains less, never refuses every
// call, and duplicate keys are refused whatever the schema.
func TestNormalizeArgsOddSchemas(t *testing.T) {
	for _, schema := range []string{`true`, `{"type":"object","properties":{"x":true}}`, `{"properties":[1]}`,
		`{"type":"object","required":"x","properties":{"x":{"type":"string"}}}`, `{"type":["object","null"]}`, `not json`} {
		if _, err := NormalizeArgs(json.RawMessage(`{"x":"a"}`), json.RawMessage(schema), SchemaUnknown); err != nil {
			t.Errorf("schema %s: %v", schema, err)
		}
		if _, err := NormalizeArgs(json.RawMessage(`{"x":"a","x":"b"}`), json.RawMessage(schema), SchemaUnknown); err == nil {
			t.Errorf("schema %s: a duplicate key was accepted", schema)
		}
	}
}

// TestNormalizeArgsUnknown: MCP tools follow JSON Schema for unknown keys;
// case variants of a property are refused in both modes.
func TestNormalizeArgsUnknown(t *testing.T) {
	mcp := Spec{Source: "mcp:srv"}
	mcp.Schema.Function.Parameters = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	if _, err := mcp.NormalizeArgs(json.RawMessage(`{"path":"a","other":1}`)); err != nil {
		t.Fatalf("mcp extra key: %v", err)
	}
	if _, err := mcp.NormalizeArgs(json.RawMessage(`{"Path":"a"}`)); err == nil {
		t.Fatal("mcp case variant accepted")
	}
	internal := mcp
	internal.Source = "internal"
	if _, err := internal.NormalizeArgs(json.RawMessage(`{"path":"a","other":1}`)); err == nil || !strings.Contains(err.Error(), `unknown key "other"`) {
		t.Fatalf("internal extra key: %v", err)
	}
}

// FuzzNormalizeArgs: any arguments against any schema (an MCP server's is
// outside input) never panic; an accepted call's canonical form re-encodes
// its map, normalizes to itself, and holds no two keys that fold together.
func FuzzNormalizeArgs(f *testing.F) {
	f.Add([]byte(`{"command":"ls","Command":"x"}`), []byte(shellSchema))
	f.Add([]byte(`{"a":{"b":[1,{"c":null}]}}`), []byte(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":["number","object"]}}}}}}`))
	f.Add([]byte(`"{\"x\":1}"`), []byte(`true`))
	f.Fuzz(func(t *testing.T, raw, schema []byte) {
		for _, mode := range []Unknown{RefuseUnknown, SchemaUnknown} {
			a, err := NormalizeArgs(raw, schema, mode)
			if err != nil {
				if !errors.Is(err, ErrInvalidArgs) {
					t.Fatalf("error %v does not wrap ErrInvalidArgs", err)
				}
				continue
			}
			again, _ := json.Marshal(a.Map)
			if string(again) != string(a.Canonical) {
				t.Fatalf("map %s, canonical %s", again, a.Canonical)
			}
			b, err := NormalizeArgs(a.Canonical, schema, mode)
			if err != nil || string(b.Canonical) != string(a.Canonical) {
				t.Fatalf("normalizing %s again: %s, %v", a.Canonical, b.Canonical, err)
			}
		}
	})
}
