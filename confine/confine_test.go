package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

func TestResolve(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	evil := filepath.Join(base, "ws-evil")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{ws, evil, outside, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	must(os.Symlink(outside, filepath.Join(ws, "linkdir")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "linkfile")))
	must(os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "insidelink")))
	must(os.Symlink(filepath.Join(base, "nowhere"), filepath.Join(ws, "dangling")))
	w, err := New(ws)
	must(err)

	cases := []struct {
		path  string
		write bool
		ok    bool
	}{
		{"a.txt", true, true},
		{"sub/new/deep.txt", true, true},
		{"insidelink/x", true, true},
		{".", false, true},
		{"../outside/secret", false, false},
		{"sub/../../outside", false, false},
		{filepath.Join(outside, "secret"), false, false},
		{filepath.Join(evil, "x"), false, false},
		{"/", false, false},
		{"linkfile", false, false},
		{"linkdir/secret", false, false},
		{"linkdir/new.txt", true, false},
		{"dangling", true, false},
	}
	for _, tc := range cases {
		_, err := w.Resolve(tc.path, tc.write)
		if tc.ok && err != nil {
			t.Errorf("Resolve(%q) = %v, want ok", tc.path, err)
		}
		if !tc.ok && !errors.Is(err, tools.ErrOutsideWorkspace) {
			t.Errorf("Resolve(%q) = %v, want ErrOutsideWorkspace", tc.path, err)
		}
	}

	// A read-only grant opens reads only; a writable one both.
	must(w.Grant(outside, false))
	if _, err := w.Resolve(filepath.Join(outside, "secret"), false); err != nil {
		t.Errorf("granted read: %v", err)
	}
	if _, err := w.Resolve(filepath.Join(outside, "secret"), true); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("read-only grant allowed a write: %v", err)
	}
	must(w.Grant(outside, true))
	if _, err := w.Resolve(filepath.Join(outside, "new"), true); err != nil {
		t.Errorf("writable grant: %v", err)
	}
	if len(w.Grants()) != 1 || !w.Grants()[0].Writable {
		t.Errorf("grants = %+v", w.Grants())
	}
}

func TestOpenRefusesLinkSwappedAfterCheck(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := New(ws)
	if err != nil {
		t.Fatal(err)
	}
	root, rel, err := w.Open("sub/f.txt", true)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// Swap the folder for a link pointing out after the check.
	if err := os.Remove(filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := root.WriteFile(rel, []byte("x"), 0o600); err == nil {
		t.Fatal("os.Root followed a link out of the workspace")
	}
	if _, err := os.Stat(filepath.Join(outside, "f.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file appeared outside: %v", err)
	}
}

func TestWithin(t *testing.T) {
	if !Within("/ws", "/ws/a") || !Within("/ws", "/ws") || Within("/ws", "/ws-evil") || Within("/ws", "/") {
		t.Fatal("Within")
	}
}
