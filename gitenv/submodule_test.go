//go:build !windows

package gitenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// subRepo is a project with a checked-out submodule "sub" whose own config
// names a clean filter for its *.txt (written by the submodule's
// .gitattributes), and a gitlink "leak" whose .git file points at another
// repository on disk whose commit subject is secret.
type subRepo struct {
	dir, marker, secret string
	bin                 string
	stamp               int
}

func newSubRepo(t *testing.T) *subRepo {
	t.Helper()
	s := &subRepo{dir: realDir(t), bin: needGit(t), secret: "secret-subject-of-other-repo"}
	s.marker = filepath.Join(realDir(t), "ran")
	up := realDir(t)
	newRepo(t, up)
	newRepo(t, s.dir)
	setup(t, s.dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub")
	setup(t, s.dir, "commit", "-q", "-m", "add sub")

	prog := filepath.Join(filepath.Dir(s.marker), "clean.sh")
	write(t, prog, "#!/bin/sh\necho clean >> "+s.marker+"\nexec cat\n")
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(s.dir, "sub")
	setup(t, sub, "config", "filter.x.clean", prog)
	write(t, filepath.Join(sub, ".gitattributes"), "*.txt filter=x\n")

	// The other repository, and a gitlink to it whose .git file points there.
	other := realDir(t)
	newRepo(t, other)
	first := setup(t, other, "rev-parse", "HEAD")
	write(t, filepath.Join(other, "a.txt"), "more\n")
	setup(t, other, "commit", "-q", "-am", s.secret)
	setup(t, s.dir, "update-index", "--add", "--cacheinfo", "160000,"+first+",leak")
	setup(t, s.dir, "commit", "-q", "-m", "add leak")
	write(t, filepath.Join(s.dir, "leak", ".git"), "gitdir: "+filepath.Join(other, ".git")+"\n")
	return s
}

// run runs git args in the project with env, after making the submodule's
// a.txt look changed (a new mtime, same content: git must hash it, through
// the clean filter). It returns the output and whether the filter ran.
func (s *subRepo) run(t *testing.T, env []string, args ...string) (string, bool) {
	t.Helper()
	s.stamp++
	when := time.Date(2030, 1, 1, 0, 0, s.stamp, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(s.dir, "sub", "a.txt"), when, when); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(s.marker)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir, cmd.Env = s.dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("git %v: %v", args, err)
	}
	_, serr := os.Stat(s.marker)
	return string(out), serr == nil
}

// TestEnvNoSubmodules: plain git runs the submodule's clean filter and
// shows the other repository's subjects; inert git does neither, even when
// .gitmodules (in the work tree, or only in the index) asks for
// ignore=none.
func TestEnvNoSubmodules(t *testing.T) {
	for _, variant := range []string{"plain", "gitmodules-none", "index-only"} {
		t.Run(variant, func(t *testing.T) {
			s := newSubRepo(t)
			switch variant {
			case "gitmodules-none", "index-only":
				setup(t, s.dir, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
				setup(t, s.dir, "config", "-f", ".gitmodules", "submodule.leak.path", "leak")
				setup(t, s.dir, "config", "-f", ".gitmodules", "submodule.leak.ignore", "none")
				setup(t, s.dir, "add", ".gitmodules")
				if variant == "index-only" {
					if err := os.Remove(filepath.Join(s.dir, ".gitmodules")); err != nil {
						t.Fatal(err)
					}
				}
			}
			plain := append(baseEnv(t), "GIT_TERMINAL_PROMPT=0")
			if _, ran := s.run(t, plain, "status"); !ran {
				t.Fatal("control: plain git status did not run the submodule's filter; the attack is not live")
			}
			if out, _ := s.run(t, plain, "diff", "--submodule=log"); !strings.Contains(out, s.secret) {
				t.Fatalf("control: plain git diff --submodule=log does not show the other repository: %s", out)
			}

			r, err := Open(context.Background(), s.bin, s.dir)
			if err != nil {
				t.Fatal(err)
			}
			env := r.Env(baseEnv(t))
			for _, args := range [][]string{
				{"status"}, {"status", "--porcelain=v2"}, {"diff"}, {"diff", "HEAD~1"}, {"diff", "HEAD~2"},
				{"log", "-p", "-3"}, {"show", "HEAD"}, {"commit", "--dry-run", "-a"},
			} {
				out, ran := s.run(t, env, args...)
				if ran {
					t.Errorf("inert git %v ran the submodule's clean filter:\n%s", args, out)
				}
				if strings.Contains(out, s.secret) {
					t.Errorf("inert git %v shows the other repository's subject:\n%s", args, out)
				}
			}
		})
	}
}

// TestEnvBlanksNamesWithEquals: a driver name holding "=" is blanked as a
// whole (Env once split "filter.x=y.clean=" at the first "=").
func TestEnvBlanksNamesWithEquals(t *testing.T) {
	h := &hostile{dir: realDir(t), bin: needGit(t)}
	h.marker = filepath.Join(realDir(t), "ran")
	newRepo(t, h.dir)
	setup(t, h.dir, "config", "filter.x=y.clean", h.prog(t, "clean"))
	write(t, filepath.Join(h.dir, ".gitattributes"), "*.txt filter=x=y\n")
	r, err := Open(context.Background(), h.bin, h.dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, env := range [][]string{baseEnv(t), r.Env(baseEnv(t))} {
		when := time.Date(2030, 1, 1, 0, 0, i, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(h.dir, "a.txt"), when, when); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(h.marker)
		cmd := exec.Command(h.bin, "status")
		cmd.Dir, cmd.Env = h.dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git status: %v %s", err, out)
		}
		_, serr := os.Stat(h.marker)
		if ran := serr == nil; ran != (i == 0) {
			t.Errorf("run %d (0: plain, 1: inert): filter ran = %v", i, ran)
		}
	}
}
