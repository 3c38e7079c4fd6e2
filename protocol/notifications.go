package protocol

import (
	"encoding/json"
	"time"
)

// SessionEvent is the params of a session.event notification: one event
// of a session, sent after it is stored, in seq order.
type SessionEvent struct {
	SessionID string `json:"sessionId"`
	// Seq starts at 1 per session and is strictly increasing, gap-free.
	Seq int64 `json:"seq"`
	// TurnID is set for the events of a turn (it equals data.taskId).
	TurnID string `json:"turnId,omitempty"`
	// Type is one of the EventType values (a string, so that a client
	// compares it with its own names without conversions).
	Type string `json:"type" enum:"EventType"`
	// Data is the event type's data (the *Data type of Events()).
	Data json.RawMessage `json:"data"`
	Time time.Time       `json:"time"`
}

// SessionDropped is the params of a session.dropped notification: the
// server stopped streaming a session to this connection.
type SessionDropped struct {
	SessionID string `json:"sessionId"`
	// LastSeq is the last seq delivered: subscribe again with afterSeq =
	// lastSeq to continue without a gap.
	LastSeq int64 `json:"lastSeq"`
	// Reason is "fell behind" or "session closed".
	Reason string `json:"reason"`
}

// SessionPresence is the params of a session.presence notification: a
// connection subscribed to the session or left it (unsubscribed, closed).
// Clients is the whole list after the change.
type SessionPresence struct {
	SessionID string           `json:"sessionId"`
	Clients   []PresenceClient `json:"clients"`
}

// MCPStatusNotification is the params of an mcp.status notification: an
// MCP server of an open project changed state.
type MCPStatusNotification struct {
	ProjectID string `json:"projectId"`
	MCPStatus
}

// MCPChanged is the params of an mcp.changed notification: a project's
// MCP servers changed (by hand in the file, or by an mcp.* call).
type MCPChanged struct {
	ProjectID string `json:"projectId"`
	// Source is file (edited by hand) or api (an mcp.* call).
	Source   string       `json:"source"`
	Added    []string     `json:"added"`
	Removed  []string     `json:"removed"`
	Changed  []string     `json:"changed"`
	Warnings []MCPWarning `json:"warnings"`
}

// TerminalOutput is the params of a terminal.output notification: a batch
// of a subscribed terminal's output.
type TerminalOutput struct {
	TerminalID string `json:"terminalId"`
	// Seq is the byte offset of the first byte.
	Seq int64 `json:"seq"`
	// Data is the raw bytes (base64 on the wire).
	Data []byte `json:"data"`
}

// TerminalExit is the params of a terminal.exit notification, after the
// terminal's last output.
type TerminalExit struct {
	TerminalID string `json:"terminalId"`
	// ExitCode is the exit status (128 + the signal number when killed by
	// a signal).
	ExitCode int `json:"exitCode"`
}

// TerminalDropped is the params of a terminal.dropped notification: this
// connection read too slowly and the subscription ended.
type TerminalDropped struct {
	TerminalID string `json:"terminalId"`
	// Seq is the first byte not delivered: re-subscribe with afterSeq = seq.
	Seq int64 `json:"seq"`
}
