package protocol

import "time"

// FileChange is one file a turn changed.
type FileChange struct {
	// Path is relative to the workspace, with '/'.
	Path string `json:"path"`
	// Status is A (added), M (modified), D (deleted) or R (renamed).
	Status string `json:"status"`
	// OldPath is the path before a rename.
	OldPath string `json:"oldPath,omitempty"`
}

// VCSTurn is a turn that changed files.
type VCSTurn struct {
	// Number counts the session's changing turns from 1.
	Number int `json:"number"`
	// Commit is the snapshot after the turn.
	Commit string `json:"commit"`
	// Status is how the turn ended (completed, interrupted, ...).
	Status string `json:"status"`
	// Time is when the snapshot was taken.
	Time  time.Time    `json:"time"`
	Files []FileChange `json:"files"`
}

// VCSPlan says what change tracking a session really uses.
type VCSPlan struct {
	// Requested is the mode asked for (off, auto, native, shadow).
	Requested string `json:"requested" enum:"VCSMode"`
	// Mode is the mode in effect: off, native or shadow.
	Mode string `json:"mode" enum:"VCSMode"`
	// Status says why, and where snapshots go.
	Status string `json:"status"`
}

// VCSTurnsResult is the result of vcs.turns.
type VCSTurnsResult struct {
	Turns []VCSTurn `json:"turns"`
	Plan  VCSPlan   `json:"plan"`
}

// VCSDiffParams are the params of vcs.diff.
type VCSDiffParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// Turn is a number from vcs.turns (1 or more).
	Turn int `json:"turn" rpc:"required"`
}

// VCSDiffResult is the result of vcs.diff.
type VCSDiffResult struct {
	// Diff is the turn's change as a unified patch (cut at 8 MiB).
	Diff string `json:"diff"`
}

// VCSRestoreParams are the params of vcs.restore.
type VCSRestoreParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Turn      int    `json:"turn" rpc:"required"`
	// Paths limits the restore (relative to the workspace, or absolute
	// inside it); empty = the whole workspace.
	Paths []string `json:"paths,omitempty"`
	// DryRun reports without changing anything.
	DryRun bool `json:"dryRun,omitempty"`
}

// VCSRestoreResult is the result of vcs.restore (paths relative to the
// workspace, sorted).
type VCSRestoreResult struct {
	Restored    []string `json:"restored"`
	Overwritten []string `json:"overwritten"`
	Deleted     []string `json:"deleted"`
	Missing     []string `json:"missing"`
	// Skipped are files left alone because a snapshot left them out (too
	// large or binary): one now is not overwritten, one the turn's
	// snapshot left out is not deleted.
	Skipped []string `json:"skipped"`
	DryRun  bool     `json:"dryRun"`
}
