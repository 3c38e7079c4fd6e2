package vcs

import "errors"

// Sentinels of the package. Paths outside the workspace are refused with an
// error wrapping tools.ErrOutsideWorkspace.
var (
	// ErrDisabled: change tracking is off for this session (mode off, or no
	// git binary).
	ErrDisabled = errors.New("change tracking is off for this session")
	// ErrTurnNotFound: the session has no turn with that number.
	ErrTurnNotFound = errors.New("no such turn")
	// ErrTurnExpired: the turn's snapshot was collected to keep the
	// project's snapshot storage under its cap (Limits.CapBytes).
	ErrTurnExpired = errors.New("the turn's snapshot expired")
	// ErrGit: a git command failed; the message carries its stderr.
	ErrGit = errors.New("git failed")
	// ErrInvalidMode: the configured mode is not off, auto, native or shadow.
	ErrInvalidMode = errors.New("invalid vcs mode")
)
