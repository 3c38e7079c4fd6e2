package ipc

import (
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/ipc/host"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/netproxy"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/terminal"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/vcs"
)

// hostedErrors maps the sentinels of the packages the server hosts to wire
// codes (the wire's own are in wsrpc's errors.go).
type errCode struct {
	err  error
	code int
}

var hostedErrors = []errCode{
	// the session host (ipc/host)
	{host.ErrInvalid, CodeInvalidParams},
	{host.ErrConflict, CodeConflict},
	{host.ErrClosed, CodeInternal},
	{host.ErrInvalidRequest, CodeInvalidRequest},
	{store.ErrNotFound, CodeNotFound},
	{store.ErrAlreadyAnswered, CodeConflict},
	{store.ErrInvalid, CodeInvalidParams},
	{engine.ErrBusy, CodeConflict},
	{engine.ErrNothingToRetry, CodeConflict},
	{engine.ErrClosed, CodeConflict},
	{permission.ErrUnknownMode, CodeInvalidParams},
	{permission.ErrUnknownPolicy, CodeInvalidParams},
	{permission.ErrUnknownOutcome, CodeInvalidParams},
	{permission.ErrUnknownDefaultApproval, CodeInvalidParams},
	{llm.ErrNoModel, CodeConfig},
	{llm.ErrNoAPIKey, CodeConfig},
	{netproxy.ErrBadProxy, CodeConfig}, // a bad SOCKS5_PROXY: no session engine is built
	// keys.*, vcs.* (keys.go, vcs_methods.go)
	{keychain.ErrUnavailable, CodeConfig},
	{keychain.ErrNotFound, CodeNotFound},
	{keychain.ErrInvalidKey, CodeInvalidParams},
	{keychain.ErrInvalidProvider, CodeInvalidParams},
	{vcs.ErrTurnNotFound, CodeNotFound},
	{vcs.ErrDisabled, CodeConfig},
	{vcs.ErrInvalidMode, CodeInvalidParams},
	{tools.ErrOutsideWorkspace, CodeForbidden},
	// mcp.* (mcp_methods.go)
	{mcp.ErrUnknownServer, CodeNotFound},
	{mcp.ErrDuplicateServer, CodeConflict},
	{mcp.ErrInvalidConfig, CodeInvalidParams},
	{mcp.ErrCommandLine, CodeInvalidParams},
	{mcp.ErrDisabled, CodeConflict},
	{mcp.ErrClosed, CodeConflict},
	{mcp.ErrUntrusted, CodeForbidden},
	{mcp.ErrStaleHash, CodeConflict},
	// terminal.* (terminal_methods.go)
	{terminal.ErrNotFound, CodeNotFound},
	{terminal.ErrOutsideProject, CodeForbidden},
	{terminal.ErrInvalid, CodeInvalidParams},
	{terminal.ErrExited, CodeConflict},
	{terminal.ErrInputFull, CodeConflict},
	{terminal.ErrUnsupported, CodeConfig},
}

// hostedErrorCodes is hostedErrors in the transport's shape.
var hostedErrorCodes = func() []wsrpc.ErrCode {
	out := make([]wsrpc.ErrCode, len(hostedErrors))
	for i, e := range hostedErrors {
		out[i] = wsrpc.ErrCode{Err: e.err, Code: e.code}
	}
	return out
}()

// wireError turns any handler error into the JSON-RPC error sent back (the
// one place: wsrpc.WireErrorOf with the hosted sentinels).
func wireError(err error) *WireError { return wsrpc.WireErrorOf(err, hostedErrorCodes) }
