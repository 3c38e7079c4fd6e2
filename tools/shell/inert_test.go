//go:build !windows

package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/shellcmd"
	"github.com/zqagent/sidecar/tools"
)

// TestRunShellIgnoresSHELL: with $SHELL naming a fish-like program that
// would leave a marker, commands still run under Interpreter, with its
// grammar.
func TestRunShellIgnoresSHELL(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "fish-ran")
	fake := filepath.Join(t.TempDir(), "fish")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho fish >> "+marker+"\necho fish-output\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHELL", fake)
	f := newFixture(t, Options{})
	// fish reads (id) as a command substitution; bash and sh refuse it, so
	// quote it the way the permission engine's parser sees one literal word.
	cmd := `echo '(id)'; echo "$0"`
	want := "(id)\n" + shellcmd.Interpreter() + "\n"
	if shellcmd.Interpreter() == "/bin/bash" {
		cmd += `; [[ -n x ]] && echo bash-grammar`
		want += "bash-grammar\n"
	}
	for _, bg := range []bool{false, true} {
		var out string
		if bg {
			res, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": cmd, "background": true})
			if err != nil {
				t.Fatal(err)
			}
			task, err := f.m.lookup(res.(StartResult).TaskID)
			if err != nil {
				t.Fatal(err)
			}
			<-task.done
			out, _ = task.out.Summary()
		} else {
			out = f.run(t, map[string]any{"command": cmd}).Output
		}
		if out != want {
			t.Errorf("background=%v: output %q, want %q", bg, out, want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("$SHELL ran a command")
	}
}

// TestUnapprovedGitIsInert: a git command run_shell runs without the
// user's approval (allowlisted or granted) runs none of the repository's
// programs; the same command approved by the user runs with the user's
// normal git, where the attack is live.
func TestUnapprovedGitIsInert(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	f := newFixture(t, Options{})
	marker := filepath.Join(t.TempDir(), "ran")
	prog := func(tag string) string {
		p := filepath.Join(filepath.Dir(marker), tag+".sh")
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+tag+" >> "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "core.hooksPath=/dev/null"}, args...)...)
		cmd.Dir = f.dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(f.dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "one")
	// A signed commit (a fake signature is enough to make git call gpg).
	obj := fmt.Sprintf("tree %s\nparent %s\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> 1700000000 +0000\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n",
		git("rev-parse", "HEAD^{tree}"), git("rev-parse", "HEAD"))
	sig := filepath.Join(t.TempDir(), "commit")
	if err := os.WriteFile(sig, []byte(obj), 0o644); err != nil {
		t.Fatal(err)
	}
	git("update-ref", "HEAD", git("hash-object", "-t", "commit", "-w", sig))
	git("config", "core.fsmonitor", prog("fsmonitor"))
	git("config", "diff.external", prog("external"))
	git("config", "gpg.program", prog("gpg"))
	git("config", "alias.st", "!"+prog("alias"))
	if err := os.WriteFile(filepath.Join(f.dir, "a.txt"), []byte("a changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commands := []string{"git status", "git diff", "git log --show-signature -1", "git st"}

	for _, c := range commands {
		res := f.run(t, map[string]any{"command": c})
		if c == "git status" && (res.ExitCode != 0 || !strings.Contains(res.Output, "a.txt")) {
			t.Errorf("inert git status: %+v", res)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("unapproved git ran the repository's programs:\n%s", b)
	}

	approved := tools.WithUserApproved(context.Background())
	for _, c := range commands {
		if _, err := f.call(approved, t, "run_shell", map[string]any{"command": c}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(marker)
	for _, tag := range []string{"fsmonitor", "external", "gpg", "alias"} {
		if !strings.Contains(string(b), tag) {
			t.Errorf("approved %s did not run; the attack is not live (ran: %q)", tag, b)
		}
	}
}

// TestUnapprovedGitStaysInWorkspace: unapproved git in a workspace inside
// another repository, or whose .git file points at another repository,
// sees neither.
func TestUnapprovedGitStaysInWorkspace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "other-secret"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir, cmd.Env = other, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	for name, make := range map[string]func() string{
		"parent repository": func() string {
			ws := filepath.Join(other, "proj")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			return ws
		},
		"foreign gitfile": func() string {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return ws
		},
	} {
		t.Run(name, func(t *testing.T) {
			ws, err := confine.New(make())
			if err != nil {
				t.Fatal(err)
			}
			m := NewManager(Options{Workspace: ws, KillGrace: time.Second})
			defer m.Close()
			spec := m.runShellSpec()
			res, err := spec.Handler(context.Background(), tools.Call{Name: "run_shell", Args: []byte(`{"command":"git log -1 --format=%s"}`)})
			if err != nil {
				t.Fatal(err)
			}
			r := res.(RunResult)
			if r.ExitCode == 0 || strings.Contains(r.Output, "other-secret") || !strings.Contains(r.Output, "not a git repository") {
				t.Fatalf("unapproved git used the other repository: %+v", r)
			}
		})
	}
}
