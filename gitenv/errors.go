package gitenv

import (
	"errors"
	"fmt"
)

// Sentinels of the package.
var (
	// ErrNoRepo: the project has no git repository of its own (a parent
	// directory's repository does not count).
	ErrNoRepo = errors.New("the project is not a git repository")
	// ErrOutside: the project's .git, its commondir, core.worktree, a link
	// anywhere in the git directory or an alternates entry points outside
	// the project; git is not run on it.
	ErrOutside = errors.New("the project's git repository points outside the project")
	// ErrUnchecked: the project's git directory could not be checked
	// (unreadable, too large, alternates nested too deep); git is not run
	// on it.
	ErrUnchecked = errors.New("the project's git directory could not be checked")
	// ErrUnconfirmed: the repository the user confirmed (a worktree's or
	// an enclosing one, Candidate) is not what the project holds now: its
	// .git file, commondir or gitdir changed, or it moved. The user must
	// confirm it again.
	ErrUnconfirmed = errors.New("the project's repository changed since it was confirmed; confirm it again")
	// ErrEnclosing: git commands (run_shell) get no repository in a
	// folder of a larger repository, even a confirmed one: they could
	// name paths outside the folder. The git tools are limited to it.
	ErrEnclosing = errors.New("git commands are off in a folder of a larger repository (use git_status, git_diff and git_log, which are limited to the folder)")
)

// OutsideError says which part of the repository leaves the project.
type OutsideError struct {
	Project string // the project folder
	What    string // ".git file", ".git link", "commondir", "core.worktree", "<path> link" or an alternates file
	Target  string // where it points
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%v: %s of %s points to %s; git is not run on a repository outside the project",
		ErrOutside, e.What, e.Project, e.Target)
}

func (e *OutsideError) Unwrap() error { return ErrOutside }
