package git

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/tools"
)

// TestGitStaysInWorkspace: a workspace whose repository is someone else's
// (a parent repository, a .git file pointing elsewhere, core.worktree
// pointing out, alternates or links in a real .git folder that lead to
// another repository's objects and refs) gets a clear error from every git tool and nothing of the
// other repository.
func TestGitStaysInWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	// other is a repository with a secret commit and a dirty secret file.
	other := newRepo(t)
	other.commit("secret subject", map[string]string{"secret.txt": "secret\n"})
	other.write("secret.txt", "secret changed\n")

	cases := []struct {
		name string
		make func(t *testing.T) string // the workspace
		want error
		why  string // the error names it
	}{
		{"parent repository", func(t *testing.T) string {
			ws := filepath.Join(other.dir, "proj")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			return ws
		}, ErrNotRepo, ""},
		{"foreign gitfile", func(t *testing.T) string {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+filepath.Join(other.dir, ".git")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return ws
		}, ErrForeignRepo, ".git file"},
		{"core.worktree outside", func(t *testing.T) string {
			r := newRepo(t)
			r.commit("mine", map[string]string{"mine.txt": "m\n"})
			r.git("config", "core.worktree", other.dir)
			return r.dir
		}, ErrForeignRepo, "core.worktree"},
		// A real .git folder whose branch names the other repository's
		// commit, found through alternates (relative) or linked objects.
		{"alternates to another repository", func(t *testing.T) string {
			r := newRepo(t)
			r.commit("mine", map[string]string{"mine.txt": "m\n"})
			objects := filepath.Join(r.dir, ".git", "objects")
			rel, err := filepath.Rel(objects, filepath.Join(other.dir, ".git", "objects"))
			if err != nil {
				t.Fatal(err)
			}
			r.write(".git/objects/info/alternates", rel+"\n")
			r.write(".git/refs/heads/main", other.git("rev-parse", "HEAD"))
			return r.dir
		}, ErrForeignRepo, ".git/objects/info/alternates"},
		{"objects and refs linked into another repository", func(t *testing.T) string {
			r := newRepo(t)
			r.commit("mine", map[string]string{"mine.txt": "m\n"})
			for _, d := range []string{"objects", "refs"} {
				p := filepath.Join(r.dir, ".git", d)
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(other.dir, ".git", d), p); err != nil {
					t.Fatal(err)
				}
			}
			return r.dir
		}, ErrForeignRepo, " link of "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws, err := confine.New(c.make(t))
			if err != nil {
				t.Fatal(err)
			}
			reg := tools.NewRegistry()
			RegisterGitTools(reg, ws)
			for _, name := range []string{"git_log", "git_status", "git_diff"} {
				spec, _ := reg.Lookup(name)
				res, err := spec.Handler(context.Background(), tools.Call{Name: name, Args: json.RawMessage(`{}`)})
				if !errors.Is(err, c.want) {
					t.Fatalf("%s: err = %v (result %v), want %v", name, err, res, c.want)
				}
				if errors.Is(c.want, ErrForeignRepo) && !errors.Is(err, gitenv.ErrOutside) {
					t.Errorf("%s: err = %v does not say what points outside", name, err)
				}
				if !strings.Contains(err.Error(), c.why) {
					t.Errorf("%s: err = %v does not name %s", name, err, c.why)
				}
				if strings.Contains(err.Error(), "secret subject") {
					t.Errorf("%s leaked the other repository: %v", name, err)
				}
			}
		})
	}
}
