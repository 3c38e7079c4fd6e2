package ipc

import (
	"encoding/json"

	"github.com/zqagent/sidecar/ipc/wsrpc"
)

// The wire's vocabulary, from the transport (ipc/wsrpc), under the names
// the handlers and this package's callers use.

// Wire limits and names.
const (
	MaxFrame               = wsrpc.MaxFrame
	MaxBatch               = wsrpc.MaxBatch
	MaxIDBytes             = wsrpc.MaxIDBytes
	Subprotocol            = wsrpc.Subprotocol
	TokenSubprotocolPrefix = wsrpc.TokenSubprotocolPrefix
)

// JSON-RPC error codes: the standard ones and the SPEC §5 ones.
const (
	CodeParseError     = wsrpc.CodeParseError
	CodeInvalidRequest = wsrpc.CodeInvalidRequest
	CodeMethodNotFound = wsrpc.CodeMethodNotFound
	CodeInvalidParams  = wsrpc.CodeInvalidParams
	CodeInternal       = wsrpc.CodeInternal
	CodeNotInitialized = wsrpc.CodeNotInitialized
	CodeNotFound       = wsrpc.CodeNotFound
	CodeConflict       = wsrpc.CodeConflict
	CodeForbidden      = wsrpc.CodeForbidden
	CodeConfig         = wsrpc.CodeConfig
)

// Sentinel errors; handlers wrap them, wireError maps them to codes.
var (
	ErrParse          = wsrpc.ErrParse
	ErrInvalidRequest = wsrpc.ErrInvalidRequest
	ErrMethodNotFound = wsrpc.ErrMethodNotFound
	ErrInvalidParams  = wsrpc.ErrInvalidParams
	ErrNotInitialized = wsrpc.ErrNotInitialized
	ErrNotFound       = wsrpc.ErrNotFound
	ErrConflict       = wsrpc.ErrConflict
	ErrForbidden      = wsrpc.ErrForbidden
	ErrConfig         = wsrpc.ErrConfig
	ErrClosed         = wsrpc.ErrClosed
	ErrFellBehind     = wsrpc.ErrFellBehind
	ErrBadOrigin      = wsrpc.ErrBadOrigin
)

// ExpandOrigins checks --allow-origin values and expands the presets
// electron and tauri (wsrpc.ExpandOrigins).
func ExpandOrigins(in []string) ([]string, error) { return wsrpc.ExpandOrigins(in) }

// WireError is a JSON-RPC error object; errors.Is(err, ipc.ErrNotFound)
// holds for one of code -32002.
type WireError = wsrpc.WireError

// decodeParams is wsrpc.DecodeParams: strict, and names the bad field.
func decodeParams(raw json.RawMessage, dst any) error { return wsrpc.DecodeParams(raw, dst) }

// invalidField is the error of a field that decoded but has a bad value.
func invalidField(field, why string) error { return wsrpc.InvalidField(field, why) }

// followUp is a handler result with work to run after the answer is queued.
func followUp(result any, after func()) wsrpc.FollowUp {
	return wsrpc.FollowUp{Result: result, After: after}
}
