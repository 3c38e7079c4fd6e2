package fs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEscapes tries every way out of the workspace with every tool.
func TestEscapes(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("in.txt"), "inside\n")
	symlink(t, filepath.Join(e.outside, "secret.txt"), e.path("link_out.txt"))
	symlink(t, "../outside/secret.txt", e.path("rel_link_out.txt"))
	symlink(t, e.outside, e.path("linkdir"))
	symlink(t, filepath.Join(e.outside, "nope.txt"), e.path("dangling"))

	escapes := []struct {
		name string
		path string
	}{
		{"dotdot", "../outside/secret.txt"},
		{"dotdot deep", "a/b/../../../outside/secret.txt"},
		{"absolute outside", filepath.Join(e.outside, "secret.txt")},
		{"sibling prefix", filepath.Join(e.evil, "secret.txt")},
		{"sibling prefix relative", "../ws-evil/secret.txt"},
		{"root", "/etc/passwd"},
		{"symlink out", "link_out.txt"},
		{"relative symlink out", "rel_link_out.txt"},
		{"file under linked folder", "linkdir/secret.txt"},
		{"new file under linked folder", "linkdir/new.txt"},
		{"dangling link out", "dangling"},
	}
	toolsArgs := []struct {
		tool string
		args func(p string) map[string]any
	}{
		{"read_file", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"list_files", func(p string) map[string]any { return map[string]any{"path": p} }},
		{"write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned\n"} }},
		{"replace_in_file", func(p string) map[string]any {
			return map[string]any{"path": p, "old_string": "TOP", "new_string": "pwned"}
		}},
	}
	for _, tc := range toolsArgs {
		for _, esc := range escapes {
			t.Run(tc.tool+"/"+esc.name, func(t *testing.T) {
				out, err := e.call(t, tc.tool, tc.args(esc.path))
				requireType(t, err, "outside_workspace")
				if s, ok := out.(string); ok && strings.Contains(s, "SECRET") {
					t.Fatalf("leaked: %s", s)
				}
			})
		}
	}
	for _, d := range []string{e.outside, e.evil} {
		if got := read(t, filepath.Join(d, "secret.txt")); got != secret {
			t.Fatalf("%s/secret.txt changed: %q", d, got)
		}
		if names := entries(t, d); !slices.Equal(names, []string{"secret.txt"}) {
			t.Fatalf("%s gained files: %v", d, names)
		}
	}
	// The link itself was not replaced by a regular file.
	if fi, err := os.Lstat(e.path("link_out.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link_out.txt must still be a symlink: %v %v", fi, err)
	}
}

// TestLinkSwappedAfterCheck replaces a checked parent directory by a link to
// outside between the confinement check and the operation.
func TestLinkSwappedAfterCheck(t *testing.T) {
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "sub/f.txt", "content": "pwned\n"}},
		{"write_file", map[string]any{"path": "sub/new.txt", "content": "pwned\n"}},
		{"replace_in_file", map[string]any{"path": "sub/f.txt", "old_string": "TOP", "new_string": "pwned"}},
		{"read_file", map[string]any{"path": "sub/f.txt"}},
		{"list_files", map[string]any{"path": "sub"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+"/"+tt.args["path"].(string), func(t *testing.T) {
			e := newEnv(t)
			write(t, e.path("sub/f.txt"), "harmless\n")
			// outside gets a file of the same name, to be read or clobbered.
			write(t, filepath.Join(e.outside, "f.txt"), secret)
			swapped := false
			afterResolve = func(string) {
				swapped = true
				if err := os.Rename(e.path("sub"), e.path("sub.orig")); err != nil {
					t.Error(err)
				}
				symlink(t, e.outside, e.path("sub"))
			}
			t.Cleanup(func() { afterResolve = nil })
			out, err := e.call(t, tt.tool, tt.args)
			if !swapped {
				t.Fatal("hook did not run")
			}
			requireType(t, err, "outside_workspace")
			if s, ok := out.(string); ok && strings.Contains(s, "SECRET") {
				t.Fatalf("leaked: %s", s)
			}
			if got := read(t, filepath.Join(e.outside, "f.txt")); got != secret {
				t.Fatalf("outside file changed: %q", got)
			}
			if names := entries(t, e.outside); !slices.Equal(names, []string{"f.txt", "secret.txt"}) {
				t.Fatalf("outside gained files: %v", names)
			}
		})
	}
}

func TestGrants(t *testing.T) {
	e := newEnv(t)
	ro := filepath.Join(e.parent, "ro")
	rw := filepath.Join(e.parent, "rw")
	write(t, filepath.Join(ro, "a.txt"), "read only\n")
	write(t, filepath.Join(rw, "b.txt"), "writable\n")

	// Nothing granted yet.
	_, err := e.call(t, "read_file", map[string]any{"path": filepath.Join(ro, "a.txt")})
	requireType(t, err, "outside_workspace")

	if err := e.w.Grant(ro, false); err != nil {
		t.Fatal(err)
	}
	if err := e.w.Grant(rw, true); err != nil {
		t.Fatal(err)
	}
	out := e.mustCall(t, "read_file", map[string]any{"path": filepath.Join(ro, "a.txt")}).(string)
	if !strings.Contains(out, "read only") {
		t.Fatalf("read granted: %q", out)
	}
	list := e.mustCall(t, "list_files", map[string]any{"path": ro}).(string)
	if !strings.Contains(list, filepath.Join(ro, "a.txt")) {
		t.Fatalf("list granted: %q", list)
	}
	_, err = e.call(t, "write_file", map[string]any{"path": filepath.Join(ro, "a.txt"), "content": "x"})
	requireType(t, err, "outside_workspace")
	_, err = e.call(t, "replace_in_file", map[string]any{"path": filepath.Join(ro, "a.txt"), "old_string": "read", "new_string": "x"})
	requireType(t, err, "outside_workspace")
	if read(t, filepath.Join(ro, "a.txt")) != "read only\n" {
		t.Fatal("read-only grant was written")
	}

	e.mustCall(t, "read_file", map[string]any{"path": filepath.Join(rw, "b.txt")})
	e.mustCall(t, "replace_in_file", map[string]any{"path": filepath.Join(rw, "b.txt"), "old_string": "writable", "new_string": "written"})
	e.mustCall(t, "write_file", map[string]any{"path": filepath.Join(rw, "new/c.txt"), "content": "c\n"})
	if read(t, filepath.Join(rw, "b.txt")) != "written\n" || read(t, filepath.Join(rw, "new/c.txt")) != "c\n" {
		t.Fatal("writable grant not written")
	}
	// A link inside the grant that points out is still refused.
	symlink(t, filepath.Join(e.outside, "secret.txt"), filepath.Join(rw, "out"))
	_, err = e.call(t, "read_file", map[string]any{"path": filepath.Join(rw, "out")})
	requireType(t, err, "outside_workspace")
}

// A link that stays inside the workspace is followed, and writing through
// it keeps the link.
func TestInsideLink(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("real/target.txt"), "target\n")
	symlink(t, e.path("real/target.txt"), e.path("alias.txt"))
	symlink(t, "real", e.path("aliasdir"))
	out := e.mustCall(t, "read_file", map[string]any{"path": "alias.txt"}).(string)
	if !strings.Contains(out, "target") {
		t.Fatalf("read through link: %q", out)
	}
	e.mustCall(t, "write_file", map[string]any{"path": "alias.txt", "content": "via link\n"})
	if fi, err := os.Lstat(e.path("alias.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("link was replaced")
	}
	if read(t, e.path("real/target.txt")) != "via link\n" {
		t.Fatal("target not written")
	}
	e.mustCall(t, "write_file", map[string]any{"path": "aliasdir/new.txt", "content": "n\n"})
	if read(t, e.path("real/new.txt")) != "n\n" {
		t.Fatal("new file under inside link")
	}
}
