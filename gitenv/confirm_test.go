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

// gitOut runs git with repo's inert environment in dir.
func gitOut(t *testing.T, bin string, repo Repo, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = repo.Env(baseEnv(t))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestConfirmedWorktree: a `git worktree add` folder is refused by Open,
// offered by Discover with resolved paths, opened by OpenConfirmed, and
// refused again (ErrUnconfirmed) once its .git file is rewritten.
func TestConfirmedWorktree(t *testing.T) {
	bin := needGit(t)
	ctx := context.Background()
	main := realDir(t)
	newRepo(t, main)
	wt := filepath.Join(realDir(t), "wt")
	setup(t, main, "worktree", "add", "-q", "-b", "feature", wt)

	_, err := Open(ctx, bin, wt)
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("Open(worktree) = %v, want ErrOutside", err)
	}
	c, err := Discover(wt)
	if err != nil || c == nil {
		t.Fatalf("Discover = %v, %v", c, err)
	}
	if c.Kind != KindWorktree || c.Repository != main || c.CommonDir != filepath.Join(main, ".git") ||
		c.GitDir != filepath.Join(main, ".git", "worktrees", "wt") || c.WorkTree != wt || !strings.HasPrefix(c.Hash, "sha256:") {
		t.Fatalf("candidate = %+v", c)
	}
	repo, err := OpenConfirmed(ctx, bin, *c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := gitOut(t, bin, repo, wt, "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil || strings.TrimSpace(out) != "feature" {
		t.Fatalf("rev-parse = %q, %v", out, err)
	}

	// An alternates entry of the confirmed common dir that names a further
	// repository is refused: a confirmation covers exactly these folders.
	other := otherRepo(t)
	write(t, filepath.Join(main, ".git", "objects", "info", "alternates"), filepath.Join(other, ".git", "objects")+"\n")
	if _, err := OpenConfirmed(ctx, bin, *c); !errors.Is(err, ErrOutside) {
		t.Fatalf("OpenConfirmed with a foreign alternate = %v, want ErrOutside", err)
	}
	if err := os.Remove(filepath.Join(main, ".git", "objects", "info", "alternates")); err != nil {
		t.Fatal(err)
	}

	// A rewritten .git file (here: pointing at the other repository) is
	// not the confirmed repository any more.
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(other, ".git")+"\n")
	if _, err := OpenConfirmed(ctx, bin, *c); !errors.Is(err, ErrUnconfirmed) {
		t.Fatalf("OpenConfirmed after a rewrite = %v, want ErrUnconfirmed", err)
	}
	if c2, err := Discover(wt); err != nil || c2 == nil || c2.Hash == c.Hash || c2.GitDir != filepath.Join(other, ".git") {
		t.Fatalf("Discover after a rewrite = %+v, %v", c2, err)
	}
}

// TestConfirmedEnclosing: a folder of a larger repository gets an
// enclosing Candidate; commands there get no repository.
func TestConfirmedEnclosing(t *testing.T) {
	bin := needGit(t)
	ctx := context.Background()
	top := realDir(t)
	newRepo(t, top)
	pkg := filepath.Join(top, "packages", "app")
	write(t, filepath.Join(pkg, "x.txt"), "x\n")
	if _, err := Open(ctx, bin, pkg); !errors.Is(err, ErrNoRepo) {
		t.Fatalf("Open(package) = %v, want ErrNoRepo", err)
	}
	c, err := Discover(pkg)
	if err != nil || c == nil {
		t.Fatalf("Discover = %v, %v", c, err)
	}
	if c.Kind != KindEnclosing || c.Repository != top || c.WorkTree != top || c.GitDir != filepath.Join(top, ".git") || c.Prefix() != "packages/app/" {
		t.Fatalf("candidate = %+v prefix %q", c, c.Prefix())
	}
	repo, err := OpenConfirmed(ctx, bin, *c)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := gitOut(t, bin, repo, pkg, "rev-parse", "--show-prefix"); err != nil || strings.TrimSpace(out) != "packages/app/" {
		t.Fatalf("show-prefix = %q, %v", out, err)
	}
	r, err := CommandsConfirmed(ctx, bin, *c)
	if !errors.Is(err, ErrEnclosing) || r.GitDir != os.DevNull {
		t.Fatalf("CommandsConfirmed(enclosing) = %+v, %v", r, err)
	}
	// The project's own repository is not a candidate.
	own := realDir(t)
	newRepo(t, own)
	if c, err := Discover(own); c != nil || err != nil {
		t.Fatalf("Discover(own) = %+v, %v", c, err)
	}
}
