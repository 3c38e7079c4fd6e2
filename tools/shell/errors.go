package shell

import "errors"

// Sentinels of the shell tools.
var (
	// ErrClosed: the session's Manager was closed; no new command starts.
	ErrClosed = errors.New("shell manager closed")
	// ErrTooManyTasks: the session already runs MaxTasks background tasks.
	ErrTooManyTasks = errors.New("too many background tasks")
	// ErrNoCommand: run_shell was called with an empty command.
	ErrNoCommand = errors.New("command is empty")
	// ErrNotDir: the requested working directory is not a directory.
	ErrNotDir = errors.New("working directory is not a directory")
)
