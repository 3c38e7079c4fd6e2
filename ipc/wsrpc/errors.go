package wsrpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/protocol"
)

// Sentinel errors of the wire. Handlers wrap them with context
// (fmt.Errorf("%w: session %q", ErrNotFound, id)); WireErrorOf maps them to
// JSON-RPC codes.
var (
	ErrParse          = errors.New("parse error")
	ErrInvalidRequest = errors.New("invalid request")
	ErrMethodNotFound = errors.New("method not found")
	ErrInvalidParams  = protocol.ErrInvalidParams
	ErrNotInitialized = errors.New("not initialized")
	ErrNotFound       = protocol.ErrNotFound
	ErrConflict       = protocol.ErrConflict
	ErrForbidden      = protocol.ErrForbidden
	ErrConfig         = protocol.ErrConfig
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
// Data is the machine-readable part ({kind, field?, ...}); every error sent
// carries it (encodeError fills in the code's default kind).
type WireError struct {
	Code    int                 `json:"code"`
	Message string              `json:"message"`
	Data    *protocol.ErrorData `json:"data,omitempty"`
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

// ErrCode maps a sentinel error to a wire code and, optionally, a finer
// error.data kind than the code's default.
type ErrCode struct {
	Err  error
	Code int
	Kind protocol.ErrorKind
}

// sentinelCodes maps the sentinels of this package to wire codes; the
// endpoint's ErrorCodes add the others.
var sentinelCodes = []ErrCode{
	{Err: ErrParse, Code: CodeParseError},
	{Err: ErrInvalidRequest, Code: CodeInvalidRequest},
	{Err: ErrMethodNotFound, Code: CodeMethodNotFound},
	{Err: ErrInvalidParams, Code: CodeInvalidParams},
	{Err: ErrNotInitialized, Code: CodeNotInitialized},
	{Err: ErrNotFound, Code: CodeNotFound},
	{Err: ErrConflict, Code: CodeConflict},
	{Err: ErrForbidden, Code: CodeForbidden},
	{Err: ErrConfig, Code: CodeConfig},
}

// WireErrorOf turns any handler error into the JSON-RPC error sent back:
// the code of the first sentinel it wraps, of this package's then of extra
// (-32603 otherwise), its message, which says what and why, and its data:
// the kind of the first sentinel of extra with that code that names one
// (else the code's default), and the field of a ParamError.
func WireErrorOf(err error, extra []ErrCode) *WireError {
	var we *WireError
	if errors.As(err, &we) {
		return we
	}
	code, msg := CodeInternal, "internal error: "+err.Error()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
		msg = err.Error()
	}
	found := false
	for _, list := range [][]ErrCode{sentinelCodes, extra} {
		for _, s := range list {
			if !found && errors.Is(err, s.Err) {
				code, msg, found = s.Code, err.Error(), true
			}
		}
	}
	return &WireError{Code: code, Message: msg, Data: errorData(err, code, extra)}
}

// errorData is the data of an error of code.
func errorData(err error, code int, extra []ErrCode) *protocol.ErrorData {
	d := &protocol.ErrorData{Kind: protocol.DefaultKind(code)}
	for _, s := range extra {
		if s.Kind != "" && s.Code == code && errors.Is(err, s.Err) {
			d.Kind = s.Kind
			break
		}
	}
	if d.Kind == protocol.KindAlreadyStarted {
		d.Reason = d.Kind
	}
	var fe protocol.FilesError
	if errors.As(err, &fe) {
		d.Files = fe.ErrorFiles()
	}
	var pe *protocol.ParamError
	if code == CodeInvalidParams && errors.As(err, &pe) {
		d.Field, d.Expected = pe.Field, pe.Expected
		if pe.Kind != "" {
			d.Kind = pe.Kind
		}
	}
	return d
}

// withMessage returns we with its data's message for people
// (Endpoint.ErrorMessage), a copy: we may be a handler's own error.
func (e *Endpoint) withMessage(we *WireError) *WireError {
	we = withData(we)
	if e.ErrorMessage == nil || we.Data.Message != "" {
		return we
	}
	msg := e.ErrorMessage(we.Data.Kind)
	if msg == "" {
		return we
	}
	d := *we.Data
	d.Message = msg
	return &WireError{Code: we.Code, Message: we.Message, Data: &d}
}

// withData returns we with its data, the code's default kind when it has
// none.
func withData(we *WireError) *WireError {
	if we.Data != nil {
		return we
	}
	return &WireError{Code: we.Code, Message: we.Message, Data: &protocol.ErrorData{Kind: protocol.DefaultKind(we.Code)}}
}
