//go:build !windows

package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

// TestUnapprovedGitRefusesObjectStoresOutside: a workspace whose .git is a
// real folder but whose alternates or linked objects lead to another
// repository: an unapproved `git cat-file --batch-all-objects --batch`
// (allowlisted read-only git) dumps nothing of the other repository, and
// the result says why; the same command approved by the user does read it
// (the attack is live), and a background one is told why when it starts.
func TestUnapprovedGitRefusesObjectStoresOutside(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "core.hooksPath=/dev/null"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git(other, "init", "-q")
	git(other, "commit", "-q", "--allow-empty", "-m", "other-secret")
	otherObjects := filepath.Join(other, ".git", "objects")

	for name, c := range map[string]struct {
		make func(dotgit string)
		why  string
	}{
		"alternates": {func(dotgit string) {
			if err := os.WriteFile(filepath.Join(dotgit, "objects", "info", "alternates"), []byte(otherObjects+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".git/objects/info/alternates of"},
		"objects linked": {func(dotgit string) {
			if err := os.RemoveAll(filepath.Join(dotgit, "objects")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(otherObjects, filepath.Join(dotgit, "objects")); err != nil {
				t.Fatal(err)
			}
		}, ".git/objects link of"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Options{})
			git(f.dir, "init", "-q")
			git(f.dir, "commit", "-q", "--allow-empty", "-m", "mine")
			c.make(filepath.Join(f.dir, ".git"))
			const dump = "git cat-file --batch-all-objects --batch"

			res, err := f.call(tools.WithUserApproved(context.Background()), t, "run_shell", map[string]any{"command": dump})
			if err != nil {
				t.Fatal(err)
			}
			if out := res.(RunResult).Output; !strings.Contains(out, "other-secret") {
				t.Fatalf("control: the approved command did not read the other repository; the attack is not live: %q", out)
			}

			r := f.run(t, map[string]any{"command": dump})
			if r.ExitCode == 0 || strings.Contains(r.Output, "other-secret") {
				t.Fatalf("unapproved git read the other repository: %+v", r)
			}
			if !strings.Contains(r.Error, "outside the project") || !strings.Contains(r.Error, c.why) {
				t.Fatalf("the result does not say why: %+v", r)
			}
			bg, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": dump, "background": true})
			if err != nil {
				t.Fatal(err)
			}
			if msg := bg.(StartResult).Message; !strings.Contains(msg, c.why) {
				t.Fatalf("the background start does not say why: %q", msg)
			}
		})
	}
}
