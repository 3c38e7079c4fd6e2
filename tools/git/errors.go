package git

import "errors"

// Sentinels of the git tools.
var (
	// ErrNotRepo: the workspace is not inside a git work tree.
	ErrNotRepo = errors.New("the workspace is not a git repository")
	// ErrUnsafeArg: a model-supplied ref or path looks like an option
	// (starts with '-') or holds control characters.
	ErrUnsafeArg = errors.New("argument refused")
	// ErrGit: git failed; the message carries its stderr.
	ErrGit = errors.New("git failed")
)
