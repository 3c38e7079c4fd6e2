package protocol

// SessionForkParams are the params of session.fork.
type SessionForkParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// TurnID is the last turn the fork keeps; absent: the session's last
	// finished turn.
	TurnID string `json:"turnId,omitempty"`
}

// ForkedFrom names the session and turn a fork was made from: the fork's
// history is that session's up to and including that turn.
type ForkedFrom struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}
