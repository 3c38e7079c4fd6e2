package conflict

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readAs records a read of p in g, as read_file does.
func readAs(t *testing.T, g *Guard, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	g.RecordRead(p, data, fi.ModTime())
}

func requireConflict(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, tools.ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	if tools.ErrorType(err) != "conflict" {
		t.Fatalf("ErrorType = %q", tools.ErrorType(err))
	}
	if !strings.Contains(err.Error(), "read_file") {
		t.Fatalf("message should tell the model to read again: %v", err)
	}
}

func newWatcher(t *testing.T, dir string, opts WatcherOptions) *Watcher {
	t.Helper()
	w, err := NewWatcher(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGuardHashOnly(t *testing.T) {
	dir := realTemp(t)
	p := filepath.Join(dir, "a.txt")
	writeFile(t, p, "one\n")
	g := NewGuard(nil)

	if err := g.CheckWrite(filepath.Join(dir, "never-read.txt")); err != nil {
		t.Fatalf("unread file: %v", err)
	}
	if err := g.CheckWrite(p); err != nil {
		t.Fatalf("unread existing file: %v", err)
	}
	readAs(t, g, p)
	if !g.Known(p) {
		t.Fatal("Known after read")
	}
	if err := g.CheckWrite(p); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	// Same size, mtime put back: only the hash can tell.
	fi, _ := os.Stat(p)
	writeFile(t, p, "two\n")
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	requireConflict(t, g.CheckWrite(p))

	// A touch that keeps the content is not a conflict.
	readAs(t, g, p)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckWrite(p); err != nil {
		t.Fatalf("touch: %v", err)
	}

	// Own write is fine.
	writeFile(t, p, "mine\n")
	g.RecordWrite(p, []byte("mine\n"))
	if err := g.CheckWrite(p); err != nil {
		t.Fatalf("own write: %v", err)
	}

	// Deleted after read.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	err := g.CheckWrite(p)
	requireConflict(t, err)
	if !strings.Contains(err.Error(), "deleted") {
		t.Fatalf("message should say deleted: %v", err)
	}
	g.Forget(p)
	if err := g.CheckWrite(p); err != nil {
		t.Fatalf("after Forget: %v", err)
	}

	var nilGuard *Guard
	nilGuard.RecordRead(p, nil, time.Time{})
	if err := nilGuard.CheckWrite(p); err != nil {
		t.Fatal("nil guard must allow")
	}
}

func TestTwoGuardsOneWatcher(t *testing.T) {
	dir := realTemp(t)
	p := filepath.Join(dir, "src", "main.go")
	writeFile(t, p, "package main\n")
	w := newWatcher(t, dir, WatcherOptions{})
	if !w.Covered(p) {
		t.Fatal("file in a watched dir should be covered")
	}
	a, b := NewGuard(w), NewGuard(w)
	readAs(t, a, p)
	readAs(t, b, p)

	before := w.Changes(p).Count
	writeFile(t, p, "package main // by A\n")
	a.RecordWrite(p, []byte("package main // by A\n"))
	eventually(t, "write event", func() bool { return w.Changes(p).Count > before })

	if err := a.CheckWrite(p); err != nil {
		t.Fatalf("A's own write must not conflict for A: %v", err)
	}
	requireConflict(t, b.CheckWrite(p))

	// B reads again and may write.
	readAs(t, b, p)
	if err := b.CheckWrite(p); err != nil {
		t.Fatalf("B after re-read: %v", err)
	}
}

func TestExternalEditor(t *testing.T) {
	dir := realTemp(t)
	p := filepath.Join(dir, "notes.md")
	writeFile(t, p, "# notes\n")
	w := newWatcher(t, dir, WatcherOptions{})
	g := NewGuard(w)
	readAs(t, g, p)
	fi, _ := os.Stat(p)

	before := w.Changes(p).Count
	// An editor saves atomically: temp file, then rename over the original,
	// keeping the size and even the mtime.
	tmp := filepath.Join(dir, ".notes.md.swp")
	writeFile(t, tmp, "# NOTES\n")
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rename event", func() bool { return w.Changes(p).Count > before })
	err := g.CheckWrite(p)
	requireConflict(t, err)
	if !strings.Contains(err.Error(), "another session or an editor") {
		t.Fatalf("watcher-seen change should be named: %v", err)
	}
}

func TestWatcherTree(t *testing.T) {
	dir := realTemp(t)
	writeFile(t, filepath.Join(dir, ".gitignore"), "build/\n")
	for _, d := range []string{"src/pkg", ".git/objects", "node_modules/x", "build/out", "docs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := realTemp(t)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	w := newWatcher(t, dir, WatcherOptions{})
	tests := []struct {
		dir  string
		want bool
	}{
		{"", true},
		{"src", true},
		{"src/pkg", true},
		{"docs", true},
		{".git", false},
		{".git/objects", false},
		{"node_modules/x", false},
		{"build", false},
		{"build/out", false},
		{"link", false},
	}
	for _, tt := range tests {
		if got := w.Covered(filepath.Join(dir, tt.dir, "f.txt")); got != tt.want {
			t.Errorf("Covered(%s/f.txt) = %v, want %v", tt.dir, got, tt.want)
		}
	}
	if s := w.Stats(); s.Watches != 4 || s.LimitHit || s.Err != nil {
		t.Fatalf("stats = %+v", s)
	}

	// New directories are watched as they appear, recursively, unless ignored.
	fresh := filepath.Join(dir, "src", "new", "deeper")
	if err := os.MkdirAll(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	eventually(t, "new dir watched", func() bool { return w.Covered(filepath.Join(fresh, "f.go")) })
	if err := os.MkdirAll(filepath.Join(dir, "build", "later"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(fresh, "f.go")
	writeFile(t, f, "x")
	eventually(t, "event in new dir", func() bool { return w.Changes(f).Count > 0 })
	if w.Covered(filepath.Join(dir, "build", "later", "f")) {
		t.Fatal("ignored tree must stay unwatched")
	}

	// A removed directory is no longer covered.
	if err := os.RemoveAll(filepath.Join(dir, "src", "new")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "removed dir forgotten", func() bool { return !w.Covered(f) })
}

func TestWatchLimitFallsBackToHash(t *testing.T) {
	dir := realTemp(t)
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		writeFile(t, filepath.Join(dir, d, "f.txt"), "v1\n")
	}
	w := newWatcher(t, dir, WatcherOptions{MaxWatches: 3})
	s := w.Stats()
	if !s.LimitHit || s.Watches != 3 {
		t.Fatalf("stats = %+v, want 3 watches and LimitHit", s)
	}
	var uncovered string
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		if p := filepath.Join(dir, d, "f.txt"); !w.Covered(p) {
			uncovered = p
		}
	}
	if uncovered == "" {
		t.Fatal("some directory must be past the limit")
	}
	g := NewGuard(w)
	readAs(t, g, uncovered)
	if err := g.CheckWrite(uncovered); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(uncovered)
	writeFile(t, uncovered, "v2\n")
	if err := os.Chtimes(uncovered, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := w.Changes(uncovered).Count; got != 0 {
		t.Fatalf("unwatched path got %d events", got)
	}
	requireConflict(t, g.CheckWrite(uncovered))
}

func TestTrackedOverflowResetsEpoch(t *testing.T) {
	dir := realTemp(t)
	p := filepath.Join(dir, "keep.txt")
	writeFile(t, p, "k\n")
	w := newWatcher(t, dir, WatcherOptions{MaxTracked: 2})
	g := NewGuard(w)
	readAs(t, g, p)
	for i := range 5 {
		q := filepath.Join(dir, "f"+string(rune('a'+i)))
		writeFile(t, q, "x")
		eventually(t, "event", func() bool { return w.Changes(q).Count > 0 })
	}
	w.mu.Lock()
	epoch, n := w.epoch, len(w.changes)
	w.mu.Unlock()
	if epoch == 0 || n > 2 {
		t.Fatalf("epoch %d, tracked %d: counters should have been reset", epoch, n)
	}
	// The recorded file is still judged correctly (by hash).
	if err := g.CheckWrite(p); err != nil {
		t.Fatal(err)
	}
}

func TestWatcherCloseTwiceAndBadRoot(t *testing.T) {
	w, err := NewWatcher(realTemp(t), WatcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Covered(filepath.Join(w.Root(), "x")) {
		t.Fatal("closed watcher covers nothing")
	}
	if _, err := NewWatcher(filepath.Join(t.TempDir(), "missing"), WatcherOptions{}); err == nil {
		t.Fatal("missing root must fail")
	}
}
