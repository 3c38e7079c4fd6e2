package fs

import (
	"testing"
	"time"

	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

// TestTwoSessionsOneWatcher runs two sessions' tools over one workspace
// watched by a real fsnotify Watcher.
func TestTwoSessionsOneWatcher(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("src/shared.go"), "package shared\n")
	w, err := conflict.NewWatcher(e.ws, conflict.WatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	session := func() *env {
		s := *e
		s.guard = conflict.NewGuard(w)
		s.reg = tools.NewRegistry()
		RegisterFileTools(s.reg, s.w, s.guard)
		return &s
	}
	a, b := session(), session()
	a.mustCall(t, "read_file", map[string]any{"path": "src/shared.go"})
	b.mustCall(t, "read_file", map[string]any{"path": "src/shared.go"})

	p := e.path("src/shared.go")
	before := w.Changes(p).Count
	a.mustCall(t, "replace_in_file", map[string]any{"path": "src/shared.go", "old_string": "shared", "new_string": "shared // A"})
	deadline := time.Now().Add(10 * time.Second)
	for w.Changes(p).Count == before {
		if time.Now().After(deadline) {
			t.Fatal("no fsnotify event for A's write")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A may go on editing its own write; B must read first.
	a.mustCall(t, "write_file", map[string]any{"path": "src/shared.go", "content": "package shared // A2\n"})
	_, err = b.call(t, "write_file", map[string]any{"path": "src/shared.go", "content": "package shared // B\n"})
	requireType(t, err, "conflict")
	if got := read(t, p); got != "package shared // A2\n" {
		t.Fatalf("B's write landed: %q", got)
	}
	b.mustCall(t, "read_file", map[string]any{"path": "src/shared.go"})
	b.mustCall(t, "write_file", map[string]any{"path": "src/shared.go", "content": "package shared // B\n"})
	_, err = a.call(t, "replace_in_file", map[string]any{"path": "src/shared.go", "old_string": "B", "new_string": "A3"})
	requireType(t, err, "conflict")
}
