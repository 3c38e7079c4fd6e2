package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// worktree.*: git worktrees for agents that work in parallel, one work
// tree (and project) per task. Every git they run is inert (gitenv: no
// hooks, filters, fsmonitor, pager or signing program), on the project's
// own repository or the one the user trusted (project.trustGit).

// Errors of worktree.*.
var (
	// ErrWorktreeDirty: worktree.remove of a work tree with uncommitted or
	// untracked changes, without force.
	ErrWorktreeDirty = errors.New("the work tree has uncommitted or untracked changes")
	// ErrGitUntrusted: a worktree.* call on a project that is not a git
	// project (no .git of its own, and its repository is not trusted).
	ErrGitUntrusted = errors.New("the project is not a git project")
)

// worktreeTimeout bounds one git worktree run (add checks out a tree).
const worktreeTimeout = 2 * time.Minute

// worktreeRepo is a project's repository for worktree.*: its own .git or
// the trusted candidate, opened inert.
type worktreeRepo struct {
	bin  string
	repo gitenv.Repo
	git  gitState
	// main is the main work tree's folder (where new work trees go
	// beside); workTree the project's work tree.
	main, workTree string
}

func (b *Backend) worktreeRepoOf(ctx context.Context, pr store.Project) (worktreeRepo, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return worktreeRepo{}, fmt.Errorf("git is not installed: %w", err)
	}
	w := worktreeRepo{bin: bin, git: b.gitStateOf(ctx, pr)}
	switch {
	case w.git.own:
		w.repo, err = gitenv.Open(ctx, bin, pr.Path)
		w.main, w.workTree = pr.Path, pr.Path
	case w.git.trusted:
		w.repo, err = gitenv.OpenConfirmed(ctx, bin, *w.git.candidate)
		w.main, w.workTree = w.git.candidate.Repository, w.git.candidate.WorkTree
	case w.git.candidate != nil:
		return w, fmt.Errorf("%w: %s is in the %s repository %s, which the user has not trusted (project.trustGit)",
			ErrGitUntrusted, pr.Path, w.git.candidate.Kind, w.git.candidate.Repository)
	default:
		return w, fmt.Errorf("%w: %s has no git repository", ErrGitUntrusted, pr.Path)
	}
	if err != nil {
		return w, fmt.Errorf("%w: %w", ErrGitUntrusted, err)
	}
	return w, nil
}

// run runs git inert in dir with w's repository pinned (GIT_DIR and, when
// withWorkTree, GIT_WORK_TREE) and returns its stdout.
func (w worktreeRepo) run(ctx context.Context, dir string, withWorkTree bool, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
	defer cancel()
	repo := w.repo
	if !withWorkTree {
		repo.WorkTree = ""
	}
	cmd := exec.CommandContext(ctx, w.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(repo.Env(proc.Env(nil)), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args[:min(2, len(args))], " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// list is `git worktree list --porcelain -z`, parsed.
func (w worktreeRepo) list(ctx context.Context) ([]protocol.Worktree, error) {
	out, err := w.run(ctx, w.workTree, true, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktrees(string(out)), nil
}

// parseWorktrees parses `git worktree list --porcelain -z`: attributes
// separated by NUL, records by an empty one; the first is the main work
// tree.
func parseWorktrees(out string) []protocol.Worktree {
	list := []protocol.Worktree{}
	var cur *protocol.Worktree
	for _, attr := range strings.Split(out, "\x00") {
		key, value, _ := strings.Cut(attr, " ")
		switch key {
		case "":
			cur = nil
		case "worktree":
			p := value
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real
			}
			list = append(list, protocol.Worktree{Path: p, Main: len(list) == 0})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil && strings.Trim(value, "0") != "" {
				cur.Head = value
			}
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(value, "refs/heads/")
			}
		case "locked":
			if cur != nil {
				cur.Locked = true
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	return list
}

// withProjects marks the current work tree and names the projects opened
// on the work trees.
func (b *Backend) withProjects(ctx context.Context, list []protocol.Worktree, current string) ([]protocol.Worktree, error) {
	prs, err := b.opts.Store.Projects(ctx)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]string, len(prs))
	for _, pr := range prs {
		ids[pr.Path] = pr.ID
	}
	for i := range list {
		list[i].Current = list[i].Path == current
		list[i].ProjectID = ids[list[i].Path]
	}
	return list, nil
}

func (b *Backend) Worktrees(ctx context.Context, p protocol.ProjectIDParams) (protocol.WorktreeListResult, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.WorktreeListResult{}, err
	}
	w, err := b.worktreeRepoOf(ctx, pr)
	if err != nil {
		return protocol.WorktreeListResult{}, err
	}
	list, err := w.list(ctx)
	if err != nil {
		return protocol.WorktreeListResult{}, fmt.Errorf("worktree.list: %w", err)
	}
	if list, err = b.withProjects(ctx, list, w.workTree); err != nil {
		return protocol.WorktreeListResult{}, err
	}
	return protocol.WorktreeListResult{Worktrees: list}, nil
}

// worktreeDefaultPath is where worktree.create puts a branch's work tree
// without a path: <main>.worktrees/<branch, '/' as '-'> beside the main
// work tree.
func worktreeDefaultPath(main, branch string) string {
	return filepath.Join(filepath.Dir(main), filepath.Base(main)+".worktrees", strings.ReplaceAll(branch, "/", "-"))
}

// worktreeTarget checks worktree.create's path: absolute, and a folder
// that does not exist or is empty. It returns it with its parent's links
// resolved, the parent created.
func worktreeTarget(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", protocol.InvalidField("path", "must be absolute")
	}
	path = filepath.Clean(path)
	if filepath.Dir(path) == path {
		return "", protocol.InvalidField("path", "is a filesystem root")
	}
	if entries, err := os.ReadDir(path); err == nil && len(entries) > 0 {
		return "", protocol.InvalidField("path", fmt.Sprintf("%s exists and is not empty", path))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", protocol.InvalidField("path", err.Error())
	}
	parent := filepath.Dir(path)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", protocol.InvalidField("path", err.Error())
	}
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return "", protocol.InvalidField("path", err.Error())
	}
	return filepath.Join(real, filepath.Base(path)), nil
}

func (b *Backend) CreateWorktree(ctx context.Context, p protocol.WorktreeCreateParams) (protocol.WorktreeCreateResult, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	w, err := b.worktreeRepoOf(ctx, pr)
	if err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	if strings.HasPrefix(p.Branch, "-") {
		return protocol.WorktreeCreateResult{}, protocol.InvalidField("branch", "must not start with '-'")
	}
	if strings.HasPrefix(p.From, "-") {
		return protocol.WorktreeCreateResult{}, protocol.InvalidField("from", "must not start with '-'")
	}
	if _, err := w.run(ctx, w.workTree, false, "check-ref-format", "--branch", p.Branch); err != nil {
		return protocol.WorktreeCreateResult{}, protocol.InvalidField("branch", fmt.Sprintf("%q is not a valid branch name", p.Branch))
	}
	path := p.Path
	if path == "" {
		path = worktreeDefaultPath(w.main, p.Branch)
	}
	if path, err = worktreeTarget(path); err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	args := []string{"worktree", "add", "--quiet", "-b", p.Branch, "--", path}
	if p.From != "" {
		args = append(args, p.From)
	}
	if _, err := w.run(ctx, w.workTree, true, args...); err != nil {
		return protocol.WorktreeCreateResult{}, fmt.Errorf("worktree.create: %w", err)
	}
	// The new project is the new work tree, or in an enclosing repository
	// the same folder in it (a monorepo's package).
	root := path
	if c := w.git.candidate; w.git.trusted && c.Prefix() != "" {
		root = filepath.Join(path, filepath.FromSlash(c.Prefix()))
	}
	if root, err = projectRoot(root); err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	// Trusted by construction: the sidecar just made it, from a repository
	// the user trusts. It must lead to that repository's common dir.
	c, err := gitenv.Discover(root)
	if err != nil || c == nil {
		return protocol.WorktreeCreateResult{}, fmt.Errorf("worktree.create: the new work tree %s has no repository: %v", root, err)
	}
	if want := w.commonDir(); c.CommonDir != want {
		return protocol.WorktreeCreateResult{}, fmt.Errorf("worktree.create: the new work tree leads to %s, not %s", c.CommonDir, want)
	}
	npr, ps, err := b.openProject(ctx, root, "")
	if err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	if err := b.setGitTrust(ctx, npr.ID, c); err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	list, err := w.list(ctx)
	if err != nil {
		return protocol.WorktreeCreateResult{}, fmt.Errorf("worktree.create: %w", err)
	}
	if list, err = b.withProjects(ctx, list, path); err != nil {
		return protocol.WorktreeCreateResult{}, err
	}
	res := protocol.WorktreeCreateResult{Project: b.projectInfo(ctx, npr, ps)}
	for _, wt := range list {
		if wt.Path == path {
			res.Worktree = wt
		}
	}
	return res, nil
}

// commonDir is the common dir of w's repository.
func (w worktreeRepo) commonDir() string {
	if w.git.trusted {
		return w.git.candidate.CommonDir
	}
	return w.repo.GitDir
}

func (b *Backend) RemoveWorktree(ctx context.Context, p protocol.WorktreeRemoveParams) (protocol.WorktreeRemoveResult, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.WorktreeRemoveResult{}, err
	}
	w, err := b.worktreeRepoOf(ctx, pr)
	if err != nil {
		return protocol.WorktreeRemoveResult{}, err
	}
	c := w.git.candidate
	if !w.git.trusted || c.Kind != gitenv.KindWorktree || c.GitDir == c.CommonDir {
		return protocol.WorktreeRemoveResult{}, fmt.Errorf("%w: %s is not a linked work tree; only those can be removed", ErrForbidden, pr.Path)
	}
	if !p.Force {
		out, err := w.run(ctx, c.WorkTree, true, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=none")
		if err != nil {
			return protocol.WorktreeRemoveResult{}, fmt.Errorf("worktree.remove: %w", err)
		}
		if n := strings.Count(string(out), "\x00"); n > 0 {
			return protocol.WorktreeRemoveResult{}, fmt.Errorf("worktree.remove: %w: %d changed or untracked paths in %s; commit them, or remove with force", ErrWorktreeDirty, n, c.WorkTree)
		}
	}
	b.closeProject(pr.ID)
	// Run from the common dir, without the work tree being removed.
	main := w
	main.repo.GitDir = c.CommonDir
	args := []string{"worktree", "remove"}
	if p.Force {
		args = append(args, "--force")
	}
	if _, err := main.run(ctx, c.CommonDir, false, append(args, "--", c.WorkTree)...); err != nil {
		return protocol.WorktreeRemoveResult{}, fmt.Errorf("worktree.remove: %w", err)
	}
	if err := b.setGitTrust(ctx, pr.ID, nil); err != nil {
		return protocol.WorktreeRemoveResult{}, err
	}
	return protocol.WorktreeRemoveResult{Path: c.WorkTree}, nil
}
