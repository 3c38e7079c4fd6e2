package backend

import "errors"

// Sentinel errors of the host; the server maps them to wire codes (the
// messages are the wire's words for them).
var (
	ErrInvalid  = errors.New("invalid params")
	ErrConflict = errors.New("conflict")
	ErrClosed   = errors.New("server closed")
	// ErrInvalidRequest is what an interactive tool fails with when its
	// call has no request id.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrIllegalTransition is a turn state transition the machine does not
	// have: a bug, logged and reported, never applied.
	ErrIllegalTransition = errors.New("illegal turn state transition")
)
