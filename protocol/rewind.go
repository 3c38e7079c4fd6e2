package protocol

// EventSessionRewound: the session's history went back to just before a
// turn (session.rewind), and with files the workspace too.
const EventSessionRewound EventType = "session_rewound"

// EventRewindInterrupted: a rewind with files was cut off while it
// restored the workspace (the process died); recorded once, at the next
// start.
const EventRewindInterrupted EventType = "rewind_interrupted"

// KindClobbered (-32003): session.rewind with files would overwrite or
// delete files that changed after the session's last snapshot;
// error.data.files names them. force: true rewinds anyway.
const KindClobbered ErrorKind = "clobbered"

// FilesError is an error that names files; the transport puts them in
// error.data.files (vcs.ClobberError is one).
type FilesError interface {
	error
	ErrorFiles() []string
}

// SessionRewindParams are the params of session.rewind.
type SessionRewindParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// TurnID is the turn to go back to just before (turn.start's turnId;
	// session.get's messages carry it on the turn's input message).
	TurnID string `json:"turnId" rpc:"required"`
	// Files: also bring the workspace back to the turn's pre-turn
	// snapshot (true), or only the history (false). The schema requires
	// it, so that a client always says which; absent reads as false.
	Files bool `json:"files"`
	// DryRun reports what would change and changes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// Force rewinds files even over changes made after the session's last
	// snapshot (the clobber guard).
	Force bool `json:"force,omitempty"`
}

// RewoundTurn is a turn a rewind drops from the history.
type RewoundTurn struct {
	TurnID string `json:"turnId"`
	// Input is the turn's text ("" for a turn with only attachments).
	Input string `json:"input"`
}

// SessionRewindResult is the result of session.rewind.
type SessionRewindResult struct {
	// ToTurnID is the turn the history now ends just before.
	ToTurnID string `json:"toTurnId"`
	// Input and Attachments are that turn's text and saved attachments,
	// for the composer to be filled in again (the attachments' files stay
	// in the session folder).
	Input       string          `json:"input"`
	Attachments []AttachmentRef `json:"attachments"`
	// DroppedTurns are the turns the history loses, oldest first: the
	// turn itself and every one after it.
	DroppedTurns []RewoundTurn `json:"droppedTurns"`
	// DroppedMessages counts the history's messages the rewind removes.
	DroppedMessages int `json:"droppedMessages"`
	// Files are the workspace files the rewind changes (changed, with
	// files: true): A re-created, M overwritten, D deleted; paths
	// relative to the workspace, sorted. Empty with files: false.
	Files []FileChange `json:"files"`
	// Skipped are files left alone because a snapshot left them out (too
	// large or binary).
	Skipped []string `json:"skipped"`
	// Clobbered are the Files that changed after the session's last
	// snapshot: a dry run lists them (the real rewind is refused over them
	// without force), a forced rewind overwrote or deleted them (their
	// content is kept in the snapshot recorded before the restore).
	Clobbered []string `json:"clobbered"`
	// SnapshotTurn is the vcs.turns number whose pre-turn snapshot the
	// workspace goes back to (0: no dropped turn changed files, or
	// files: false).
	SnapshotTurn int  `json:"snapshotTurn,omitempty"`
	DryRun       bool `json:"dryRun"`
}

// SessionRewoundData: the history went back to just before ToTurnID.
// The event log keeps every event before it; from here on the history
// is the one without the dropped turns (session.get, the next model
// request, compaction).
type SessionRewoundData struct {
	// TaskID is always "": the event belongs to no turn.
	TaskID   string `json:"taskId"`
	ToTurnID string `json:"toTurnId"`
	// DroppedTurns are the ids of the turns the history lost, oldest
	// first.
	DroppedTurns []string `json:"droppedTurns"`
	// Files are the workspace files the rewind changed (empty without
	// files).
	Files []FileChange `json:"files"`
}

// EventTaskID implements EventData.
func (d SessionRewoundData) EventTaskID() string { return d.TaskID }

// RewindInterruptedData: the process died while a rewind restored the
// workspace. The history was not rewound; the workspace may be partly
// restored. Calling session.rewind {turnId: ToTurnID, files: true} again
// finishes it (files already restored are not touched; dryRun shows what
// is left).
type RewindInterruptedData struct {
	// TaskID is always "": the event belongs to no turn.
	TaskID   string `json:"taskId"`
	ToTurnID string `json:"toTurnId"`
	// SnapshotTurn is the vcs.turns number whose pre-turn snapshot the
	// restore was bringing back.
	SnapshotTurn int `json:"snapshotTurn,omitempty"`
	// StartedAt is when the rewind began (RFC 3339).
	StartedAt string `json:"startedAt"`
	// Message says what happened, for people.
	Message string `json:"message"`
}

// EventTaskID implements EventData.
func (d RewindInterruptedData) EventTaskID() string { return d.TaskID }
