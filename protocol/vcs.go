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
	// MoreFiles counts the changes of an expired turn not listed in Files
	// (an expired turn keeps at most 200).
	MoreFiles int `json:"moreFiles,omitempty"`
	// Expired: the turn's snapshot was collected to keep the project's
	// snapshot storage under its cap; it can no longer be diffed or
	// restored.
	Expired bool `json:"expired"`
	// Omitted are the files the turn's snapshot left out: over the size
	// limit, or binary over the binary limit.
	Omitted []OmittedFile `json:"omitted"`
	// OmittedMore counts the omitted files not listed (at most 1,000 are).
	OmittedMore int `json:"omittedMore,omitempty"`
	// TurnID is the session's turn (turn.start's turnId) whose changes
	// the snapshot holds; absent for snapshots taken before it was
	// recorded.
	TurnID string `json:"turnId,omitempty"`
}

// OmittedFile is a file a snapshot left out.
type OmittedFile struct {
	// Path is relative to the workspace, with '/'.
	Path string `json:"path"`
	// Size is its size in bytes when the snapshot was taken.
	Size int64 `json:"size"`
	// Reason is too_large (over 64 MiB) or binary (a NUL byte in its first
	// 8,000 bytes, and over 8 MiB).
	Reason OmittedReason `json:"reason"`
}

// OmittedReason says why a snapshot left a file out.
type OmittedReason string

// The reasons.
const (
	// OmittedTooLarge: over the size limit (64 MiB).
	OmittedTooLarge OmittedReason = "too_large"
	// OmittedBinary: binary and over the binary limit (8 MiB).
	OmittedBinary OmittedReason = "binary"
)

// OmittedReasons lists the reasons.
var OmittedReasons = []OmittedReason{OmittedTooLarge, OmittedBinary}

// VCSUsageResult is the result of vcs.usage: a project's snapshot storage.
type VCSUsageResult struct {
	// Bytes is the space its snapshots take on disk.
	Bytes int64 `json:"bytes"`
	// CapBytes is the project's cap (settings.snapshotCapBytes).
	CapBytes int64 `json:"capBytes"`
	// Turns counts the turns whose snapshots are kept, ExpiredTurns those
	// whose snapshots were collected.
	Turns        int `json:"turns"`
	ExpiredTurns int `json:"expiredTurns"`
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
