package backend

import (
	"errors"

	"github.com/zqagent/sidecar/protocol"
)

// Sentinel errors of the host; the server maps them to wire codes (the
// messages are the wire's words for them).
var (
	ErrInvalid   = protocol.ErrInvalidParams
	ErrConflict  = protocol.ErrConflict
	ErrNotFound  = protocol.ErrNotFound
	ErrForbidden = protocol.ErrForbidden
	ErrConfig    = protocol.ErrConfig
	ErrClosed    = errors.New("server closed")
	// ErrInvalidRequest is what an interactive tool fails with when its
	// call has no request id.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrIllegalTransition is a turn state transition the machine does not
	// have: a bug, logged and reported, never applied.
	ErrIllegalTransition = errors.New("illegal turn state transition")
)
