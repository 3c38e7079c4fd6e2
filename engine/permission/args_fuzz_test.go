package permission

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

// The schemas of run_shell and write_file, as the tools register them.
var (
	fuzzShellSchema = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string"},
		"timeout_ms":{"type":"integer"},"background":{"type":"boolean"}},"required":["command"],"additionalProperties":false}`)
	fuzzWriteSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},
		"opts":{"type":"object"}},"required":["path","content"],"additionalProperties":false}`)
)

// handlerArgs is how the handlers decode their arguments: a struct, with
// encoding/json's case-insensitive field matching.
type handlerArgs struct {
	Command    string         `json:"command"`
	Cwd        string         `json:"cwd"`
	TimeoutMS  int64          `json:"timeout_ms"`
	Background bool           `json:"background"`
	Path       string         `json:"path"`
	Content    *string        `json:"content"`
	Opts       map[string]any `json:"opts"`
}

// FuzzDecisionInput feeds random tool-call JSON (seeds in
// testdata/fuzz/FuzzDecisionInput: duplicate and case-variant keys, unicode
// look-alikes, nested objects) through the one strict decode the engine
// runs, and checks that what the permission engine decides on is what the
// handler gets: the values Evaluate reads from the map equal the fields the
// handler decodes from the canonical bytes, the canonical bytes re-encode
// the map, and decoding them again changes nothing.
func FuzzDecisionInput(f *testing.F) {
	f.Add([]byte(`{"command":"echo hello","Command":"touch pwned"}`), false)
	f.Add([]byte(`{"path":"notes.txt","content":"x","Path":".agent/mcp.json"}`), true)
	f.Fuzz(func(t *testing.T, raw []byte, write bool) {
		schema, meta := fuzzShellSchema, shellMeta
		if write {
			schema, meta = fuzzWriteSchema, writeMeta
		}
		a, err := tools.NormalizeArgs(raw, schema, tools.RefuseUnknown)
		if err != nil {
			return
		}
		var h handlerArgs
		if err := tools.DecodeArgs(a.Canonical, &h); err != nil {
			t.Fatalf("handler cannot decode the canonical %s: %v", a.Canonical, err)
		}
		// What the decision reads.
		if write {
			paths := pathValues(a.Map, meta)
			if len(paths) > 1 || (h.Path != "" && (len(paths) != 1 || paths[0] != h.Path)) || (h.Path == "" && len(paths) != 0) {
				t.Fatalf("decision paths %q, handler path %q (%s)", paths, h.Path, raw)
			}
		} else {
			cmd, _ := shellCommand(a.Map, meta)
			if cmd != h.Command {
				t.Fatalf("decision command %q, handler command %q (%s)", cmd, h.Command, raw)
			}
			if cwd, _ := a.Map["cwd"].(string); cwd != h.Cwd {
				t.Fatalf("decision cwd %q, handler cwd %q (%s)", cwd, h.Cwd, raw)
			}
		}
		for k := range a.Map {
			for _, field := range []string{"command", "cwd", "path", "content", "timeout_ms", "background", "opts"} {
				if k != field && strings.EqualFold(k, field) {
					t.Fatalf("case variant %q of %q accepted (%s)", k, field, raw)
				}
			}
		}
		again, err := json.Marshal(a.Map)
		if err != nil || !bytes.Equal(again, a.Canonical) {
			t.Fatalf("the map re-encodes to %s, the canonical form is %s", again, a.Canonical)
		}
		b, err := tools.NormalizeArgs(a.Canonical, schema, tools.RefuseUnknown)
		if err != nil || !bytes.Equal(b.Canonical, a.Canonical) {
			t.Fatalf("normalizing %s again: %s, %v", a.Canonical, b.Canonical, err)
		}
	})
}
