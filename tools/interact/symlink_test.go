//go:build unix

package interact

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

// TestRequestDirectoryThroughSymlink: the repo's docs -> ../private link.
// The card shows the real path, that it is outside the project and the
// link it came through; the grant covers exactly the real path, and
// swapping the link afterwards grants nothing more.
func TestRequestDirectoryThroughSymlink(t *testing.T) {
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project, private, other := filepath.Join(parent, "project"), filepath.Join(parent, "private"), filepath.Join(parent, "other")
	for _, d := range []string{project, private, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{private, other} {
		if err := os.WriteFile(filepath.Join(d, "secret.txt"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(project, "docs")
	if err := os.Symlink("../private", link); err != nil {
		t.Fatal(err)
	}
	ws, err := confine.New(project)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHandlers{dir: tools.DirAnswer{Granted: true}}
	reg := tools.NewRegistry()
	RegisterDirectoryTool(reg, h, ws)
	out, err := run(t, reg, "request_directory", "d1", map[string]any{"path": "docs", "reason": "read the docs"})
	if err != nil {
		t.Fatal(err)
	}
	want := tools.DirRequest{Reason: "read the docs", Path: private, OutsideProject: true, RequestedPath: link, Link: link, LinkTarget: "../private"}
	if len(h.dirs) != 1 || h.dirs[0] != want {
		t.Fatalf("card = %+v\nwant   %+v", h.dirs, want)
	}
	if res := out.(DirResult); !res.Granted || res.Path != private {
		t.Fatalf("result = %+v", res)
	}
	if g := ws.Grants(); len(g) != 1 || g[0].Path != private {
		t.Fatalf("grants = %+v", g)
	}
	if _, err := readVia(ws, filepath.Join(private, "secret.txt")); err != nil {
		t.Fatalf("the granted real path: %v", err)
	}
	// Re-point the link: the grant does not follow it.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../other", link); err != nil {
		t.Fatal(err)
	}
	if _, err := readVia(ws, filepath.Join(other, "secret.txt")); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Fatalf("the grant followed the swapped link: %v", err)
	}
}

// TestGrantExactRefusesLink: a path that resolves elsewhere by the time
// of the grant is refused.
func TestGrantExactRefusesLink(t *testing.T) {
	ws, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "l")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := ws.GrantExact(link, false); !errors.Is(err, tools.ErrConflict) {
		t.Fatalf("GrantExact through a link: %v", err)
	}
	if err := ws.GrantExact(real, false); err != nil {
		t.Fatal(err)
	}
}
