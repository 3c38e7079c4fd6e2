package sessionfile

import (
	"encoding/json"
	"errors"
	"time"
)

// The format's name and the one version this package writes and reads.
const (
	FormatName = "zqagent-session"
	Version    = 1
)

// The members of the archive.
const (
	ManifestName   = "manifest.json"
	EventsName     = "events.jsonl"
	HistoryName    = "history.jsonl"
	CompactionName = "compaction.json"
	AttachmentDir  = "attachments" // attachments/<name>
)

// Errors. Every error of Read and Write wraps one of them.
var (
	// ErrInvalid: the file is not a session file this package reads, or
	// something in it breaks the format's rules (the message says what).
	ErrInvalid = errors.New("not a valid session file")
	// ErrTooLarge: the file, a member, a line or a count is over its limit.
	ErrTooLarge = errors.New("session file over a limit")
	// ErrVersion: the file is of a version this package does not read.
	ErrVersion = errors.New("unsupported session file version")
)

// Manifest is manifest.json.
type Manifest struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exportedAt"`
	// Sidecar is the exporting sidecar's version (informational).
	Sidecar string  `json:"sidecar,omitempty"`
	Session Session `json:"session"`
	// Events and Messages count the lines of events.jsonl and
	// history.jsonl.
	Events   int `json:"events"`
	Messages int `json:"messages"`
	// Attachments lists the files under attachments/, each once.
	Attachments []Attachment `json:"attachments"`
}

// Session is the exported session's row: what a new session made from the
// file takes (a new id; the title and the settings).
type Session struct {
	// ID is the exported session's id (informational: an import makes a
	// new one).
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	TitleSource string    `json:"titleSource"` // auto | user
	Model       string    `json:"model"`
	Mode        string    `json:"mode"`
	Agent       string    `json:"agent"`
	Provider    string    `json:"provider"`
	TaskCount   int       `json:"taskCount"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Settings is the session's settings object (protocol.SessionSettings
	// and the change-tracking mode); the writer's caller chooses which
	// members go in.
	Settings json.RawMessage `json:"settings"`
	// Usage is the session's usage totals, a JSON object; absent when none.
	Usage json.RawMessage `json:"usage,omitempty"`
}

// Attachment is one file under attachments/.
type Attachment struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// Event is one line of events.jsonl.
type Event struct {
	Seq    int64           `json:"seq"`
	TurnID string          `json:"turnId,omitempty"`
	Type   string          `json:"type"`
	Data   json.RawMessage `json:"data"`
	Time   time.Time       `json:"time"`
}

// Limits bound what Read accepts and Write produces.
type Limits struct {
	FileBytes        int64 // the whole file
	ManifestBytes    int64 // manifest.json
	Events           int   // lines of events.jsonl
	EventBytes       int   // one line of events.jsonl
	EventsBytes      int64 // events.jsonl
	Messages         int   // lines of history.jsonl
	MessageBytes     int   // one line of history.jsonl
	HistoryBytes     int64 // history.jsonl
	CompactionBytes  int64 // compaction.json
	Attachments      int   // files under attachments/
	AttachmentBytes  int64 // one attachment
	AttachmentsBytes int64 // all attachments together
}

// DefaultLimits are the limits of session.export and session.import.
var DefaultLimits = Limits{
	FileBytes:        768 << 20,
	ManifestBytes:    1 << 20,
	Events:           1_000_000,
	EventBytes:       4 << 20,
	EventsBytes:      128 << 20,
	Messages:         100_000,
	MessageBytes:     8 << 20,
	HistoryBytes:     64 << 20,
	CompactionBytes:  1 << 20,
	Attachments:      10_000,
	AttachmentBytes:  64 << 20,
	AttachmentsBytes: 512 << 20,
}

// entries is the most entries a file within lim may have: the four
// members and the attachments.
func (lim Limits) entries() int { return lim.Attachments + 4 }
