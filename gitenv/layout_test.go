package gitenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// otherRepo is a repository outside every project, with a commit whose
// subject is "other-secret".
func otherRepo(t *testing.T) string {
	t.Helper()
	o := realDir(t)
	setup(t, o, "init", "-q", "-b", "main")
	write(t, filepath.Join(o, "secret.txt"), "the other repository's secret\n")
	setup(t, o, "add", "secret.txt")
	setup(t, o, "commit", "-q", "-m", "other-secret")
	return o
}

// link makes name a symlink to target, creating name's folder.
func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(name); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// relTo is target relative to dir.
func relTo(t *testing.T, dir, target string) string {
	t.Helper()
	r, err := filepath.Rel(dir, target)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCheckLayoutRefusesWaysOut: each way a project's .git can lead git
// to another repository's objects, refs or files is refused by Open with
// an OutsideError naming the part, and Commands pins nothing usable.
func TestCheckLayoutRefusesWaysOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	bin := needGit(t)
	type tc struct {
		name string
		what string // the OutsideError's What
		make func(t *testing.T, p, o string)
	}
	objects := func(p string) string { return filepath.Join(p, ".git", "objects") }
	cases := []tc{
		{"alternates absolute", ".git/objects/info/alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(objects(p), "info", "alternates"), objects(o)+"\n")
		}},
		{"alternates relative", ".git/objects/info/alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(objects(p), "info", "alternates"), "# a comment\n\n"+relTo(t, objects(p), objects(o))+"\n")
		}},
		{"alternates quoted", ".git/objects/info/alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(objects(p), "info", "alternates"), `"`+objects(o)+`"`+"\n")
		}},
		{"alternates with CRLF", ".git/objects/info/alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(objects(p), "info", "alternates"), objects(o)+"\r\n")
		}},
		{"alternates nested", "store/info/alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(p, "store", "info", "alternates"), objects(o)+"\n")
			write(t, filepath.Join(objects(p), "info", "alternates"), "../../store\n")
		}},
		{"alternate inside with a pack link out", "store/pack link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(objects(o), "pack"), filepath.Join(p, "store", "pack"))
			write(t, filepath.Join(objects(p), "info", "alternates"), filepath.Join(p, "store")+"\n")
		}},
		{"alternate through an inside link that leads out", ".git/objects/info/alternates", func(t *testing.T, p, o string) {
			link(t, objects(o), filepath.Join(p, "vendor", "objs"))
			write(t, filepath.Join(objects(p), "info", "alternates"), "../../vendor/objs\n")
		}},
		{"http-alternates URL", ".git/objects/info/http-alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(objects(p), "info", "http-alternates"), "https://example.com/other.git/objects\n")
		}},
		{"http-alternates path", ".git/objects/info/http-alternates", func(t *testing.T, p, o string) {
			write(t, filepath.Join(objects(p), "info", "http-alternates"), objects(o)+"\n")
		}},
		{"objects link", ".git/objects link", func(t *testing.T, p, o string) {
			link(t, objects(o), objects(p))
		}},
		{"objects/pack link", ".git/objects/pack link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(objects(o), "pack"), filepath.Join(objects(p), "pack"))
		}},
		{"loose object link", ".git/objects/ab/cdef link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(objects(o), "info"), filepath.Join(objects(p), "ab", "cdef"))
		}},
		{"refs link", ".git/refs link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "refs"), filepath.Join(p, ".git", "refs"))
		}},
		{"refs/heads link", ".git/refs/heads link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "refs", "heads"), filepath.Join(p, ".git", "refs", "heads"))
		}},
		{"packed-refs link", ".git/packed-refs link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "packed-refs"), filepath.Join(p, ".git", "packed-refs"))
		}},
		{"HEAD link", ".git/HEAD link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "HEAD"), filepath.Join(p, ".git", "HEAD"))
		}},
		{"info/grafts link", ".git/info/grafts link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "HEAD"), filepath.Join(p, ".git", "info", "grafts"))
		}},
		{"index link", ".git/index link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "index"), filepath.Join(p, ".git", "index"))
		}},
		{"config link", ".git/config link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "config"), filepath.Join(p, ".git", "config"))
		}},
		{"private folder link", ".git/zqagent link", func(t *testing.T, p, o string) {
			link(t, realDir(t), filepath.Join(p, ".git", "zqagent"))
		}},
		{"dangling link out", ".git/zqagent link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(realDir(t), "not-yet"), filepath.Join(p, ".git", "zqagent"))
		}},
		{"dangling relative link climbing out", ".git/refs/heads/x link", func(t *testing.T, p, o string) {
			link(t, "../../../../x", filepath.Join(p, ".git", "refs", "heads", "x"))
		}},
		{"inside link to a folder that links out", ".git/objects/pack/inner link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(objects(o), "pack"), filepath.Join(p, "store", "inner"))
			link(t, "../../store", filepath.Join(objects(p), "pack"))
		}},
		{"commondir inside whose refs lead out", "common/refs link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git", "refs"), filepath.Join(p, "common", "refs"))
			write(t, filepath.Join(p, ".git", "commondir"), "../common\n")
		}},
		{"config include outside", "include.path in", func(t *testing.T, p, o string) {
			setup(t, p, "config", "include.path", filepath.Join(o, ".git", "config"))
		}},
		{"config include relative, climbing out", "include.path in", func(t *testing.T, p, o string) {
			setup(t, p, "config", "include.path", relTo(t, filepath.Join(p, ".git"), filepath.Join(o, ".git", "config")))
		}},
		{"config include from home", "include.path in", func(t *testing.T, p, o string) {
			setup(t, p, "config", "include.path", "~/.gitconfig")
		}},
		{"conditional config include outside", "includeif.onbranch:main.path in", func(t *testing.T, p, o string) {
			setup(t, p, "config", "includeIf.onbranch:main.path", filepath.Join(o, ".git", "config"))
		}},
		{"config include inside that includes outside", "shared.gitconfig", func(t *testing.T, p, o string) {
			write(t, filepath.Join(p, "shared.gitconfig"), "[include]\n\tpath = "+filepath.Join(o, ".git", "config")+"\n")
			setup(t, p, "config", "include.path", "../shared.gitconfig")
		}},
		{"modules link", ".git/modules/sub link", func(t *testing.T, p, o string) {
			link(t, filepath.Join(o, ".git"), filepath.Join(p, ".git", "modules", "sub"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := otherRepo(t)
			p := realDir(t)
			newRepo(t, p)
			c.make(t, p, o)
			_, err := Open(context.Background(), bin, p)
			var oe *OutsideError
			if !errors.Is(err, ErrOutside) || !errors.As(err, &oe) {
				t.Fatalf("Open err = %v, want an OutsideError", err)
			}
			if !strings.Contains(oe.What, c.what) || !strings.Contains(err.Error(), "outside the project") {
				t.Fatalf("Open err = %v, want one naming %s", err, c.what)
			}
			if cr, _ := Commands(context.Background(), bin, p); cr.GitDir != os.DevNull {
				t.Fatalf("Commands pinned %q for a refused repository", cr.GitDir)
			}
		})
	}
}

// TestAlternatesAttackIsLive: the alternates case above is a real leak
// under git's own rules (control), and a refused repository's inert
// Commands environment cannot read the other repository.
func TestAlternatesAttackIsLive(t *testing.T) {
	bin := needGit(t)
	o := otherRepo(t)
	p := realDir(t)
	newRepo(t, p)
	write(t, filepath.Join(p, ".git", "objects", "info", "alternates"), filepath.Join(o, ".git", "objects")+"\n")
	dump := func(env []string) string {
		cmd := exec.Command(bin, "cat-file", "--batch-all-objects", "--batch")
		cmd.Dir, cmd.Env = p, env
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := dump(append(baseEnv(t), "GIT_CEILING_DIRECTORIES="+filepath.Dir(p))); !strings.Contains(out, "other-secret") {
		t.Fatalf("control: plain git does not read the alternate; the attack is not live:\n%s", out)
	}
	r, err := Commands(context.Background(), bin, p)
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("Commands err = %v", err)
	}
	if out := dump(r.Env(baseEnv(t))); strings.Contains(out, "other-secret") || !strings.Contains(out, "not a git repository") {
		t.Fatalf("inert git read the other repository:\n%s", out)
	}
}

// TestConfigIncludeAttackIsLive: an include of another repository's
// config is a real leak under git's own rules (control: git config --list
// shows its remote URL with a token); Open refuses it, naming the include.
func TestConfigIncludeAttackIsLive(t *testing.T) {
	bin := needGit(t)
	o := otherRepo(t)
	setup(t, o, "config", "remote.origin.url", "https://user:other-token@example.com/x.git")
	p := realDir(t)
	newRepo(t, p)
	setup(t, p, "config", "include.path", filepath.Join(o, ".git", "config"))
	if out := setup(t, p, "config", "--list"); !strings.Contains(out, "other-token") {
		t.Fatalf("control: the include is not read; the attack is not live:\n%s", out)
	}
	_, err := Open(context.Background(), bin, p)
	var oe *OutsideError
	if !errors.As(err, &oe) || !strings.HasPrefix(oe.What, "include.path in "+filepath.Join(p, ".git", "config")) {
		t.Fatalf("Open err = %v, want an OutsideError about the include", err)
	}
}

// TestEnvDropsObjectStoreVariables: variables that add or replace object
// stores never reach an inert run.
func TestEnvDropsObjectStoreVariables(t *testing.T) {
	bin := needGit(t)
	o := otherRepo(t)
	p := realDir(t)
	newRepo(t, p)
	r, err := Open(context.Background(), bin, p)
	if err != nil {
		t.Fatal(err)
	}
	objs := filepath.Join(o, ".git", "objects")
	for _, v := range []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objs, "GIT_OBJECT_DIRECTORY=" + objs, "GIT_COMMON_DIR=" + filepath.Join(o, ".git"), "git_alternate_object_directories=" + objs} {
		base := append(baseEnv(t), v)
		cmd := exec.Command(bin, "cat-file", "--batch-all-objects", "--batch")
		cmd.Dir, cmd.Env = p, base
		control, _ := cmd.CombinedOutput()
		cmd = exec.Command(bin, "cat-file", "--batch-all-objects", "--batch")
		cmd.Dir, cmd.Env = p, r.Env(base)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "other-secret") || !strings.Contains(string(out), "one") {
			t.Errorf("%s: inert run read another store (control leaked: %v): %v\n%s", v, strings.Contains(string(control), "other-secret"), err, out)
		}
	}
}

// TestCheckLayoutKeepsRealRepositories: repositories git itself makes,
// packed or not, cloned or not, with their default files, links that stay
// inside, alternates inside the project, linked hooks and an unborn
// symlinked HEAD all still open, and git works on them.
func TestCheckLayoutKeepsRealRepositories(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	bin := needGit(t)
	cases := []struct {
		name string
		make func(t *testing.T) string
	}{
		{"git init, empty", func(t *testing.T) string { p := realDir(t); setup(t, p, "init", "-q"); return p }},
		{"one commit", func(t *testing.T) string { p := realDir(t); newRepo(t, p); return p }},
		{"packed and gc'd", func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			setup(t, p, "tag", "v1")
			setup(t, p, "gc", "-q", "--aggressive")
			setup(t, p, "pack-refs", "--all")
			return p
		}},
		{"clone", func(t *testing.T) string {
			src := realDir(t)
			newRepo(t, src)
			parent := realDir(t)
			setup(t, parent, "clone", "-q", src, "proj")
			return filepath.Join(parent, "proj")
		}},
		{"bare-style clone with --no-checkout", func(t *testing.T) string {
			src := realDir(t)
			newRepo(t, src)
			parent := realDir(t)
			setup(t, parent, "clone", "-q", "--no-checkout", "--no-local", src, "proj")
			return filepath.Join(parent, "proj")
		}},
		{"alternates inside the project", func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			store := filepath.Join(p, "vendor", "lib")
			if err := os.MkdirAll(store, 0o755); err != nil {
				t.Fatal(err)
			}
			newRepo(t, store)
			write(t, filepath.Join(p, ".git", "objects", "info", "alternates"), "# shared\n../../vendor/lib/.git/objects\n")
			return p
		}},
		{"objects linked inside", func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			if err := os.Rename(filepath.Join(p, ".git", "objects"), filepath.Join(p, ".objects")); err != nil {
				t.Fatal(err)
			}
			link(t, "../.objects", filepath.Join(p, ".git", "objects"))
			return p
		}},
		{"config include inside the project", func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			write(t, filepath.Join(p, ".gitconfig"), "[core]\n\tquotePath = false\n")
			setup(t, p, "config", "include.path", "../.gitconfig")
			return p
		}},
		{"hooks linked outside", func(t *testing.T) string {
			p := realDir(t)
			newRepo(t, p)
			link(t, filepath.Join(realDir(t), "pre-commit"), filepath.Join(p, ".git", "hooks", "pre-commit"))
			return p
		}},
		{"symlinked HEAD on an unborn branch", func(t *testing.T) string {
			p := realDir(t)
			setup(t, p, "init", "-q")
			link(t, "refs/heads/unborn", filepath.Join(p, ".git", "HEAD"))
			return p
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.make(t)
			r, err := Open(context.Background(), bin, p)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			cmd := exec.Command(bin, "status", "--porcelain")
			cmd.Dir, cmd.Env = p, r.Env(baseEnv(t))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git status: %v\n%s", err, out)
			}
		})
	}
}

// TestCheckLayoutIsBounded: a cancelled context stops the walk.
func TestCheckLayoutIsBounded(t *testing.T) {
	p := realDir(t)
	for i := range 3 * readDirBatch {
		write(t, filepath.Join(p, ".git", "objects", "aa", fmt.Sprintf("%038x", i)), "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := CheckLayout(ctx, p, filepath.Join(p, ".git")); !errors.Is(err, context.Canceled) {
		t.Fatalf("CheckLayout with a cancelled context = %v", err)
	}
}
