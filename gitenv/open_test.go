package gitenv

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenStaysInProject(t *testing.T) {
	bin := needGit(t)
	type tc struct {
		name string
		make func(t *testing.T) string // returns the project
		err  error
		what string // OutsideError.What
	}
	other := func(t *testing.T) string {
		o := realDir(t)
		newRepo(t, o)
		return o
	}
	cases := []tc{
		{name: "own .git", make: func(t *testing.T) string { p := realDir(t); newRepo(t, p); return p }},
		{name: "parent repository", err: ErrNoRepo, make: func(t *testing.T) string {
			parent := other(t)
			p := filepath.Join(parent, "proj")
			write(t, filepath.Join(p, "x.txt"), "x\n")
			return p
		}},
		{name: "foreign gitfile", err: ErrOutside, what: ".git file", make: func(t *testing.T) string {
			o := other(t)
			p := realDir(t)
			write(t, filepath.Join(p, ".git"), "gitdir: "+filepath.Join(o, ".git")+"\n")
			return p
		}},
		{name: "relative gitfile escaping", err: ErrOutside, what: ".git file", make: func(t *testing.T) string {
			o := other(t)
			p := realDir(t)
			rel, _ := filepath.Rel(p, filepath.Join(o, ".git"))
			write(t, filepath.Join(p, ".git"), "gitdir: "+rel+"\n")
			return p
		}},
		{name: "gitfile inside", make: func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			if err := os.Rename(filepath.Join(p, ".git"), filepath.Join(p, ".gitdata")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(p, ".git"), "gitdir: .gitdata\n")
			return p
		}},
		{name: ".git link outside", err: ErrOutside, what: ".git link", make: func(t *testing.T) string {
			o := other(t)
			p := realDir(t)
			if err := os.Symlink(filepath.Join(o, ".git"), filepath.Join(p, ".git")); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "core.worktree outside", err: ErrOutside, what: "core.worktree", make: func(t *testing.T) string {
			o := realDir(t)
			p := realDir(t)
			newRepo(t, p)
			setup(t, p, "config", "core.worktree", o)
			return p
		}},
		{name: "core.worktree relative escaping", err: ErrOutside, what: "core.worktree", make: func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			setup(t, p, "config", "core.worktree", "../..")
			return p
		}},
		{name: "commondir outside", err: ErrOutside, what: "commondir", make: func(t *testing.T) string {
			o := other(t)
			p := realDir(t)
			newRepo(t, p)
			write(t, filepath.Join(p, ".git", "commondir"), filepath.Join(o, ".git")+"\n")
			return p
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.make(t)
			r, err := Open(context.Background(), bin, p)
			if c.err == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if r.Project != p || r.WorkTree != p || !within(p, r.GitDir) {
					t.Fatalf("repo = %+v", r)
				}
				return
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("Open err = %v, want %v", err, c.err)
			}
			var oe *OutsideError
			if c.what != "" && (!errors.As(err, &oe) || oe.What != c.what) {
				t.Fatalf("Open err = %#v, want an OutsideError about %s", err, c.what)
			}
			cr, _ := Commands(context.Background(), bin, p)
			switch {
			case errors.Is(c.err, ErrNoRepo) && cr.GitDir != "":
				t.Fatalf("Commands pinned %q for a project without a repository", cr.GitDir)
			case errors.Is(c.err, ErrOutside) && cr.GitDir != os.DevNull:
				t.Fatalf("Commands pinned %q for a refused repository", cr.GitDir)
			}
		})
	}
}

// TestCommandsKeepsTheUsersIdentity: the global config is not read, but an
// inert git commit is still the user's, unless the repository names its own.
func TestCommandsKeepsTheUsersIdentity(t *testing.T) {
	bin := needGit(t)
	home := realDir(t)
	write(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = Global User\n\temail = global@example.com\n")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	userIdentity = newIdentityReader()
	t.Cleanup(func() { userIdentity = newIdentityReader() })

	author := func(p string) string {
		r, err := Commands(context.Background(), bin, p)
		if err != nil {
			t.Fatal(err)
		}
		env := r.Env(append(baseEnv(t), "HOME="+home))
		for _, args := range [][]string{{"commit", "-q", "--allow-empty", "-m", "inert"}, {"log", "-1", "--format=%an <%ae>"}} {
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = p, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
			if args[0] == "log" {
				return strings.TrimSpace(string(out))
			}
		}
		return ""
	}
	p := realDir(t)
	newRepo(t, p)
	if got := author(p); got != "Global User <global@example.com>" {
		t.Errorf("author = %q, want the user's global identity", got)
	}
	setup(t, p, "config", "user.name", "Repo User")
	setup(t, p, "config", "user.email", "repo@example.com")
	if got := author(p); got != "Repo User <repo@example.com>" {
		t.Errorf("author = %q, want the repository's identity", got)
	}
}
