package protocol

import (
	"errors"
	"fmt"
)

// JSON-RPC error codes: the standard ones and the sidecar's own.
const (
	CodeParseError     = -32700 // the frame is not JSON
	CodeInvalidRequest = -32600 // not a valid request object, bad batch, binary frame
	CodeMethodNotFound = -32601 // unknown method
	CodeInvalidParams  = -32602 // a param is missing, mistyped or has a bad value
	CodeInternal       = -32603 // anything else
	CodeNotInitialized = -32001 // a call before initialize
	CodeNotFound       = -32002 // unknown session, project, request, terminal, ...
	CodeConflict       = -32003 // already answered, busy, nothing to retry, ...
	CodeForbidden      = -32004 // outside the workspace, untrusted, a builtin
	CodeConfig         = -32005 // no model, no key, no keychain, tracking off, ...
)

// ErrorKind is the machine-readable reason of an error, in error.data.kind.
// Each code has a default kind (the code's name); some errors have a finer
// one. A client that does not know a kind treats it as its code's default.
type ErrorKind string

// The error kinds. The first group are the codes' defaults.
const (
	KindParseError     ErrorKind = "parse_error"
	KindInvalidRequest ErrorKind = "invalid_request"
	KindMethodNotFound ErrorKind = "method_not_found"
	KindInvalidParams  ErrorKind = "invalid_params"
	KindInternal       ErrorKind = "internal"
	KindNotInitialized ErrorKind = "not_initialized"
	KindNotFound       ErrorKind = "not_found"
	KindConflict       ErrorKind = "conflict"
	KindForbidden      ErrorKind = "forbidden"
	KindConfig         ErrorKind = "config"

	// -32602: field is missing (or zero where a value is required).
	KindRequired ErrorKind = "required"
	// -32602: field has the wrong JSON type; expected names the right one.
	KindWrongType ErrorKind = "wrong_type"
	// -32602: initialize's protocolVersion does not overlap the sidecar's;
	// supported is the range it speaks.
	KindUnsupportedVersion ErrorKind = "unsupported_version"

	// -32003: the request was answered already (another window, a timeout).
	KindAlreadyAnswered ErrorKind = "already_answered"
	// -32003: a turn runs where none may (or none runs where one must).
	KindBusy ErrorKind = "busy"
	// -32003: the last turn did not end in a retriable error, or nothing
	// is left to resume.
	KindNothingToRetry ErrorKind = "nothing_to_retry"
	// -32003: a name that exists already (MCP server, agent).
	KindExists ErrorKind = "exists"
	// -32003: mcp.trust or project.trustGit with a hash the config or
	// repository no longer has.
	KindStaleHash ErrorKind = "stale_hash"
	// -32003: worktree.remove of a work tree with uncommitted or untracked
	// changes, without force.
	KindUncommittedChanges ErrorKind = "uncommitted_changes"
	// -32003: a terminal that exited, or whose input queue is full.
	KindTerminalUnavailable ErrorKind = "terminal_unavailable"
	// -32003: vcs.restore or vcs.diff of a turn whose snapshot expired
	// (collected to keep the project's snapshot storage under its cap).
	KindSnapshotExpired ErrorKind = "snapshot_expired"
	// -32003: queue.update, queue.move or queue.remove of a turn that has
	// started (it left the queue).
	KindAlreadyStarted ErrorKind = "already_started"
	// -32003: a files.search that a newer files.search of the same
	// connection replaced before it ended.
	KindSuperseded ErrorKind = "superseded"

	// -32004: a path outside the workspace or the project.
	KindOutsideWorkspace ErrorKind = "outside_workspace"
	// -32004: an MCP server that is not trusted.
	KindUntrusted ErrorKind = "untrusted"

	// -32005: no model is configured.
	KindNoModel ErrorKind = "no_model"
	// -32005: no API key is configured for the provider.
	KindNoAPIKey ErrorKind = "no_api_key"
	// -32005: the OS keychain cannot be used.
	KindKeychainUnavailable ErrorKind = "keychain_unavailable"
	// -32005: change tracking is off for the session.
	KindVCSDisabled ErrorKind = "vcs_disabled"
	// -32005: the feature is not supported on this platform (terminals).
	KindUnsupported ErrorKind = "unsupported"
)

// ErrorKinds lists every kind, in the order above.
var ErrorKinds = []ErrorKind{
	KindParseError, KindInvalidRequest, KindMethodNotFound, KindInvalidParams, KindInternal,
	KindNotInitialized, KindNotFound, KindConflict, KindForbidden, KindConfig,
	KindRequired, KindWrongType, KindUnsupportedVersion,
	KindAlreadyAnswered, KindBusy, KindNothingToRetry, KindExists, KindStaleHash, KindUncommittedChanges, KindTerminalUnavailable, KindSnapshotExpired, KindAlreadyStarted, KindSuperseded, KindClobbered,
	KindOutsideWorkspace, KindUntrusted,
	KindNoModel, KindNoAPIKey, KindKeychainUnavailable, KindVCSDisabled, KindUnsupported,
}

// DefaultKind is the kind of an error of code that has no finer one.
func DefaultKind(code int) ErrorKind {
	switch code {
	case CodeParseError:
		return KindParseError
	case CodeInvalidRequest:
		return KindInvalidRequest
	case CodeMethodNotFound:
		return KindMethodNotFound
	case CodeInvalidParams:
		return KindInvalidParams
	case CodeNotInitialized:
		return KindNotInitialized
	case CodeNotFound:
		return KindNotFound
	case CodeConflict:
		return KindConflict
	case CodeForbidden:
		return KindForbidden
	case CodeConfig:
		return KindConfig
	}
	return KindInternal
}

// ErrorData is error.data: what a program needs to react to an error
// without parsing its message.
type ErrorData struct {
	// Kind is the machine-readable reason.
	Kind ErrorKind `json:"kind"`
	// Field is the param at fault, as a path into params
	// ("sessionId", "response.outcome", "attachments[1]"), for -32602.
	Field string `json:"field,omitempty"`
	// Expected is the JSON type the field must have (kind wrong_type):
	// string, integer, number, boolean, array or object.
	Expected string `json:"expected,omitempty"`
	// Supported is the range of protocol versions the sidecar speaks
	// (kind unsupported_version).
	Supported *VersionRange `json:"supported,omitempty"`
	// Reason says why an edit of the queue (queue.update, queue.move,
	// queue.remove) was refused with -32003: already_started, the same
	// value as Kind, named as those methods document it.
	Reason ErrorKind `json:"reason,omitempty"`
	// Files are the files a refusal names (kind clobbered: the files
	// session.rewind would overwrite or delete that changed after the
	// session's last snapshot), relative to the workspace.
	Files []string `json:"files,omitempty"`
	// Message says the error to people, in the sidecar's default language
	// (the shell's initialize locale, else the OS locale), for the kinds a
	// shell shows (no_api_key, busy, stale_hash, …); absent for the others.
	Message string `json:"message,omitempty"`
}

// Error is a JSON-RPC error object. It is also a Go error.
type Error struct {
	// Code is one of the Code constants.
	Code int `json:"code"`
	// Message says what failed and why, for people; never a secret.
	Message string `json:"message"`
	// Data is the machine-readable part; the sidecar always sends it.
	Data *ErrorData `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

// KindOf returns e's kind: Data.Kind, else the code's default.
func (e *Error) KindOf() ErrorKind {
	if e.Data != nil && e.Data.Kind != "" {
		return e.Data.Kind
	}
	return DefaultKind(e.Code)
}

// The sentinel errors of the wire's codes that the backend and the handlers
// wrap (fmt.Errorf("%w: …", protocol.ErrNotFound)); the transport
// (ipc/wsrpc) maps each to its code, and its sentinels of these codes are
// these values.
var (
	ErrInvalidParams = errors.New("invalid params") // CodeInvalidParams
	ErrNotFound      = errors.New("not found")      // CodeNotFound
	ErrConflict      = errors.New("conflict")       // CodeConflict
	ErrForbidden     = errors.New("forbidden")      // CodeForbidden
	ErrConfig        = errors.New("configuration")  // CodeConfig
)
