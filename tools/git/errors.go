package git

import "errors"

// Sentinels of the git tools.
var (
	// ErrNotRepo: the workspace has no git repository of its own (a
	// repository in a parent directory does not count).
	ErrNotRepo = errors.New("the workspace is not a git repository")
	// ErrForeignRepo: the workspace's .git file or link, commondir,
	// core.worktree, a link in its git directory or an alternates entry
	// points outside the workspace; the tools refuse it. The error wraps the
	// *gitenv.OutsideError that says which.
	ErrForeignRepo = errors.New("the workspace's git repository is outside the workspace")
	// ErrNotEnabled: the workspace is a git worktree or a folder of a
	// larger repository (gitenv.Discover) that the user has not confirmed
	// (or that changed since); the message says how to enable git.
	ErrNotEnabled = errors.New("git is not enabled for this project")
	// ErrUnsafeArg: a model-supplied ref or path looks like an option
	// (starts with '-') or holds control characters.
	ErrUnsafeArg = errors.New("argument refused")
	// ErrGit: git failed; the message carries its stderr.
	ErrGit = errors.New("git failed")
)
