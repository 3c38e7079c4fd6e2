package ipc

import (
	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/netproxy"
	"github.com/zqagent/sidecar/protocol"
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
	kind protocol.ErrorKind // error.data.kind; "" = the code's default
}

var hostedErrors = []errCode{
	// the session host (backend)
	{backend.ErrInvalid, CodeInvalidParams, ""},
	{backend.ErrConflict, CodeConflict, ""},
	{backend.ErrClosed, CodeInternal, ""},
	{backend.ErrInvalidRequest, CodeInvalidRequest, ""},
	{store.ErrNotFound, CodeNotFound, ""},
	{store.ErrAlreadyAnswered, CodeConflict, protocol.KindAlreadyAnswered},
	{store.ErrInvalid, CodeInvalidParams, ""},
	{engine.ErrBusy, CodeConflict, protocol.KindBusy},
	{engine.ErrNothingToRetry, CodeConflict, protocol.KindNothingToRetry},
	{engine.ErrClosed, CodeConflict, ""},
	{permission.ErrUnknownMode, CodeInvalidParams, ""},
	{permission.ErrUnknownPolicy, CodeInvalidParams, ""},
	{permission.ErrUnknownOutcome, CodeInvalidParams, ""},
	{permission.ErrUnknownDefaultApproval, CodeInvalidParams, ""},
	{llm.ErrNoModel, CodeConfig, protocol.KindNoModel},
	{llm.ErrNoAPIKey, CodeConfig, protocol.KindNoAPIKey},
	{netproxy.ErrBadProxy, CodeConfig, ""}, // a bad SOCKS5_PROXY: no session engine is built
	// keys.*, vcs.* (keys.go, vcs_methods.go)
	{keychain.ErrUnavailable, CodeConfig, protocol.KindKeychainUnavailable},
	{keychain.ErrNotFound, CodeNotFound, ""},
	{keychain.ErrInvalidKey, CodeInvalidParams, ""},
	{keychain.ErrInvalidProvider, CodeInvalidParams, ""},
	{vcs.ErrTurnNotFound, CodeNotFound, ""},
	{vcs.ErrDisabled, CodeConfig, protocol.KindVCSDisabled},
	{vcs.ErrInvalidMode, CodeInvalidParams, ""},
	{tools.ErrOutsideWorkspace, CodeForbidden, protocol.KindOutsideWorkspace},
	// mcp.* (mcp_methods.go)
	{mcp.ErrUnknownServer, CodeNotFound, ""},
	{mcp.ErrDuplicateServer, CodeConflict, protocol.KindExists},
	{mcp.ErrInvalidConfig, CodeInvalidParams, ""},
	{mcp.ErrCommandLine, CodeInvalidParams, ""},
	{mcp.ErrDisabled, CodeConflict, ""},
	{mcp.ErrClosed, CodeConflict, ""},
	{mcp.ErrUntrusted, CodeForbidden, protocol.KindUntrusted},
	{mcp.ErrStaleHash, CodeConflict, protocol.KindStaleHash},
	// project.trustGit, worktree.* (git_trust.go, worktree_methods.go)
	{errGitStaleHash, CodeConflict, protocol.KindStaleHash},
	{errWorktreeDirty, CodeConflict, protocol.KindUncommittedChanges},
	{errGitUntrusted, CodeForbidden, protocol.KindUntrusted},
	// terminal.* (terminal_methods.go)
	{terminal.ErrNotFound, CodeNotFound, ""},
	{terminal.ErrOutsideProject, CodeForbidden, protocol.KindOutsideWorkspace},
	{terminal.ErrInvalid, CodeInvalidParams, ""},
	{terminal.ErrExited, CodeConflict, protocol.KindTerminalUnavailable},
	{terminal.ErrInputFull, CodeConflict, protocol.KindTerminalUnavailable},
	{terminal.ErrUnsupported, CodeConfig, protocol.KindUnsupported},
}

// hostedErrorCodes is hostedErrors in the transport's shape.
var hostedErrorCodes = func() []wsrpc.ErrCode {
	out := make([]wsrpc.ErrCode, len(hostedErrors))
	for i, e := range hostedErrors {
		out[i] = wsrpc.ErrCode{Err: e.err, Code: e.code, Kind: e.kind}
	}
	return out
}()

// wireError turns any handler error into the JSON-RPC error sent back (the
// one place: wsrpc.WireErrorOf with the hosted sentinels).
func wireError(err error) *WireError { return wsrpc.WireErrorOf(err, hostedErrorCodes) }
