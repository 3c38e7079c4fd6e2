package wsrpc

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors of the wire. Handlers wrap them with context
// (fmt.Errorf("%w: session %q", ErrNotFound, id)); WireErrorOf maps them to
// JSON-RPC codes.
var (
	ErrParse          = errors.New("parse error")
	ErrInvalidRequest = errors.New("invalid request")
	ErrMethodNotFound = errors.New("method not found")
	ErrInvalidParams  = errors.New("invalid params")
	ErrNotInitialized = errors.New("not initialized")
	ErrNotFound       = errors.New("not found")
	ErrConflict       = errors.New("conflict")
	ErrForbidden      = errors.New("forbidden")
	ErrConfig         = errors.New("configuration")
	ErrClosed         = errors.New("server closed")
	ErrFellBehind     = errors.New("fell behind")
)

// JSON-RPC error codes: the standard ones and the SPEC §5 ones.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeNotInitialized = -32001
	CodeNotFound       = -32002
	CodeConflict       = -32003
	CodeForbidden      = -32004
	CodeConfig         = -32005
)

// WireError is a JSON-RPC error object. It is also a Go error, so a client can
// test errors.Is(err, ipc.ErrNotFound) on what it got back (Is compares codes).
type WireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *WireError) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

// Is reports whether target is the sentinel of e's code.
func (e *WireError) Is(target error) bool {
	if w, ok := target.(*WireError); ok {
		return w.Code == e.Code
	}
	return codeSentinel[e.Code] == target
}

var codeSentinel = map[int]error{
	CodeParseError:     ErrParse,
	CodeInvalidRequest: ErrInvalidRequest,
	CodeMethodNotFound: ErrMethodNotFound,
	CodeInvalidParams:  ErrInvalidParams,
	CodeNotInitialized: ErrNotInitialized,
	CodeNotFound:       ErrNotFound,
	CodeConflict:       ErrConflict,
	CodeForbidden:      ErrForbidden,
	CodeConfig:         ErrConfig,
}

// ErrCode maps a sentinel error to a wire code.
type ErrCode struct {
	Err  error
	Code int
}

// sentinelCodes maps the sentinels of this package to wire codes; the
// endpoint's ErrorCodes add the others.
var sentinelCodes = []ErrCode{
	{ErrParse, CodeParseError},
	{ErrInvalidRequest, CodeInvalidRequest},
	{ErrMethodNotFound, CodeMethodNotFound},
	{ErrInvalidParams, CodeInvalidParams},
	{ErrNotInitialized, CodeNotInitialized},
	{ErrNotFound, CodeNotFound},
	{ErrConflict, CodeConflict},
	{ErrForbidden, CodeForbidden},
	{ErrConfig, CodeConfig},
}

// WireErrorOf turns any handler error into the JSON-RPC error sent back:
// the code of the first sentinel it wraps, of this package's then of extra
// (-32603 otherwise), and its message, which says what and why.
func WireErrorOf(err error, extra []ErrCode) *WireError {
	var we *WireError
	if errors.As(err, &we) {
		return we
	}
	for _, s := range sentinelCodes {
		if errors.Is(err, s.Err) {
			return &WireError{Code: s.Code, Message: err.Error()}
		}
	}
	for _, s := range extra {
		if errors.Is(err, s.Err) {
			return &WireError{Code: s.Code, Message: err.Error()}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
		return &WireError{Code: CodeInternal, Message: err.Error()}
	}
	return &WireError{Code: CodeInternal, Message: "internal error: " + err.Error()}
}
