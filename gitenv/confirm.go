package gitenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Kinds of Candidate.
const (
	// KindWorktree: the project's .git is a file (or link) naming a git
	// directory outside the project, as `git worktree add` (and a
	// submodule) makes.
	KindWorktree = "worktree"
	// KindEnclosing: the project has no .git; a folder above it holds the
	// repository (a package of a monorepo).
	KindEnclosing = "enclosing"
)

// Candidate is a repository that holds a project without being the
// project's own: Open refuses it, and OpenConfirmed uses it once the user
// has confirmed exactly this Candidate (its Hash). Every path is resolved
// (absolute, symlinks resolved), never as the repository wrote it.
type Candidate struct {
	// Kind is KindWorktree or KindEnclosing.
	Kind string `json:"kind"`
	// Project is the project folder.
	Project string `json:"project"`
	// Repository is the repository's top level: for an enclosing one the
	// folder that holds its .git; for a worktree the main work tree (the
	// folder of a common dir named .git, else the common dir itself).
	Repository string `json:"repository"`
	// WorkTree is the work tree git runs with: the project for a
	// worktree, Repository for an enclosing repository.
	WorkTree string `json:"workTree"`
	// GitDir is the git directory; CommonDir its commondir (GitDir when it
	// names none).
	GitDir    string `json:"gitDir"`
	CommonDir string `json:"commonDir"`
	// Hash ("sha256:<hex>") covers the fields above and the bytes of every
	// file that led to them (the .git file, commondir, the worktree's
	// gitdir back link): a rewrite or a move gives another Hash.
	Hash string `json:"hash"`
}

// Prefix is the project's path relative to WorkTree, with a trailing
// slash ("" for a worktree): the folder git's paths are limited to.
func (c Candidate) Prefix() string {
	rel, err := filepath.Rel(c.WorkTree, c.Project)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel) + "/"
}

// roots are the folders a confirmed repository may lead to: the project,
// its git directory and its common dir; nothing they name further.
func (c Candidate) roots() []string { return []string{c.Project, c.GitDir, c.CommonDir} }

// Discover finds the repository that holds project (an absolute path,
// symlinks resolved) when it is not the project's own: a .git file or link
// that names a git directory outside the project (KindWorktree), or, when
// the project has no .git, the nearest folder above it with one
// (KindEnclosing; never the home directory or a filesystem root, which a
// dotfiles repository makes). It reads a few small files and runs no git.
// It returns nil and no error when the project has a repository of its own
// or none at all; a project whose own .git directory leads outside is
// Open's to refuse, not a Candidate.
func Discover(project string) (*Candidate, error) {
	dotgit := filepath.Join(project, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return enclosing(project)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrNoRepo, err)
	case fi.IsDir():
		return nil, nil // its own
	}
	c := &Candidate{Kind: KindWorktree, Project: project, WorkTree: project}
	var evidence []string
	if c.GitDir, evidence, err = gitDirFrom(project, dotgit, fi); err != nil {
		return nil, err
	}
	if within(project, c.GitDir) {
		return nil, nil // inside: Open's own case
	}
	return c.finish(evidence)
}

// enclosing finds the nearest folder above project with a .git.
func enclosing(project string) (*Candidate, error) {
	home := ""
	if h, err := os.UserHomeDir(); err == nil {
		home, _ = filepath.EvalSymlinks(h)
	}
	for dir := filepath.Dir(project); ; dir = filepath.Dir(dir) {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil {
			if dir == home || filepath.Dir(dir) == dir {
				return nil, nil // a dotfiles repository is never offered
			}
			c := &Candidate{Kind: KindEnclosing, Project: project, Repository: dir, WorkTree: dir}
			var evidence []string
			if fi.IsDir() {
				if c.GitDir, err = filepath.EvalSymlinks(dotgit); err != nil {
					return nil, fmt.Errorf("%w: %v", ErrNoRepo, err)
				}
			} else if c.GitDir, evidence, err = gitDirFrom(dir, dotgit, fi); err != nil {
				return nil, err
			}
			return c.finish(evidence)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %v", ErrNoRepo, err)
		}
		if filepath.Dir(dir) == dir {
			return nil, nil
		}
	}
}

// gitDirFrom resolves the git directory a .git file or link in dir names,
// with the bytes that named it.
func gitDirFrom(dir, dotgit string, fi fs.FileInfo) (string, []string, error) {
	var target, evidence string
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(dotgit)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %v", ErrNoRepo, err)
		}
		target, evidence = dotgit, "link "+t
	case fi.Mode().IsRegular():
		b, err := readSmall(dotgit, 4096)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s: %v", ErrNoRepo, dotgit, err)
		}
		if target, err = readGitfile(dotgit); err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		evidence = "file " + string(b)
	default:
		return "", nil, fmt.Errorf("%w: %s is not a directory or a .git file", ErrNoRepo, dotgit)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %s names %s: %v", ErrNoRepo, dotgit, target, err)
	}
	return real, []string{dotgit + " " + evidence}, nil
}

// finish resolves the common dir and the top level and computes the hash.
func (c *Candidate) finish(evidence []string) (*Candidate, error) {
	if fi, err := os.Stat(c.GitDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a git directory", ErrNoRepo, c.GitDir)
	}
	c.CommonDir = c.GitDir
	for _, name := range []string{"commondir", "gitdir"} {
		b, err := readSmall(filepath.Join(c.GitDir, name), 4096)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoRepo, name, err)
		}
		evidence = append(evidence, name+" "+string(b))
		if name != "commondir" {
			continue
		}
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(c.GitDir, common)
		}
		if c.CommonDir, err = filepath.EvalSymlinks(common); err != nil {
			return nil, fmt.Errorf("%w: commondir %s: %v", ErrNoRepo, common, err)
		}
	}
	if c.Repository == "" {
		c.Repository = c.CommonDir
		if filepath.Base(c.CommonDir) == ".git" {
			c.Repository = filepath.Dir(c.CommonDir)
		}
	}
	if within(c.GitDir, c.Project) || within(c.CommonDir, c.Project) {
		return nil, fmt.Errorf("%w: %s lies inside the git directory %s", ErrNoRepo, c.Project, c.GitDir)
	}
	h := sha256.New()
	for _, f := range append([]string{c.Kind, c.Project, c.Repository, c.WorkTree, c.GitDir, c.CommonDir}, evidence...) {
		fmt.Fprintf(h, "%d:%s\n", len(f), f)
	}
	c.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return c, nil
}

// Verify checks that c is still what Discover finds for its project (the
// same Hash) and that nothing its git directory leads to leaves the
// project, the git directory or the common dir (CheckLayout with those
// three folders; an alternates entry, link or include naming anything
// further is refused). A rewritten .git file, commondir or moved
// repository is ErrUnconfirmed.
func (c Candidate) Verify(ctx context.Context) error {
	cur, err := Discover(c.Project)
	if err != nil {
		return err
	}
	if cur == nil || cur.Hash != c.Hash {
		return fmt.Errorf("%w: %s", ErrUnconfirmed, c.Project)
	}
	return checkLayout(ctx, c.roots(), c.GitDir)
}

// OpenConfirmed is Open for a repository the user confirmed (c, from
// Discover): Verify, then the repository pinned to c's git directory and
// work tree, with the same inert scan as Open (config includes limited to
// the project, the git directory and the common dir; core.worktree to
// those and the work tree).
func OpenConfirmed(ctx context.Context, bin string, c Candidate) (Repo, error) {
	if err := c.Verify(ctx); err != nil {
		return Repo{}, err
	}
	r := Repo{Project: c.Project, GitDir: c.GitDir, WorkTree: c.WorkTree, roots: c.roots()}
	if c.WorkTree != c.Project {
		r.roots = append(r.roots, c.WorkTree) // core.worktree may name it
	}
	if err := r.scan(ctx, bin); err != nil {
		return Repo{}, err
	}
	r.roots = c.roots()
	return r, nil
}

// CommandsConfirmed is Commands for a confirmed repository: a worktree's
// repository is pinned as OpenConfirmed opens it; in an enclosing
// repository commands get no repository at all (GIT_DIR=os.DevNull, with
// ErrEnclosing): a git command line can name any path and any object of
// the repository (git show HEAD:../secret), so it cannot be held to the
// project folder. The git tools are.
func CommandsConfirmed(ctx context.Context, bin string, c Candidate) (Repo, error) {
	if c.Kind == KindEnclosing {
		return Repo{Project: c.Project, GitDir: os.DevNull}, fmt.Errorf("%w: %s is a folder of %s", ErrEnclosing, c.Project, c.Repository)
	}
	r, err := OpenConfirmed(ctx, bin, c)
	if err != nil {
		return Repo{Project: c.Project, GitDir: os.DevNull}, err
	}
	if !r.ownIdentity {
		r.identity = userIdentity(bin)
	}
	return r, nil
}
