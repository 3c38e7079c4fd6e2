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
	{backend.ErrInvalid, wsrpc.CodeInvalidParams, ""},
	{backend.ErrConflict, wsrpc.CodeConflict, ""},
	{backend.ErrAlreadyStarted, wsrpc.CodeConflict, protocol.KindAlreadyStarted},
	{backend.ErrRewindBusy, wsrpc.CodeConflict, protocol.KindBusy},
	{backend.ErrClosed, wsrpc.CodeInternal, ""},
	{backend.ErrInvalidRequest, wsrpc.CodeInvalidRequest, ""},
	{store.ErrNotFound, wsrpc.CodeNotFound, ""},
	{store.ErrAlreadyAnswered, wsrpc.CodeConflict, protocol.KindAlreadyAnswered},
	{store.ErrInvalid, wsrpc.CodeInvalidParams, ""},
	{engine.ErrBusy, wsrpc.CodeConflict, protocol.KindBusy},
	{engine.ErrNothingToRetry, wsrpc.CodeConflict, protocol.KindNothingToRetry},
	{engine.ErrClosed, wsrpc.CodeConflict, ""},
	{permission.ErrUnknownMode, wsrpc.CodeInvalidParams, ""},
	{permission.ErrUnknownPolicy, wsrpc.CodeInvalidParams, ""},
	{permission.ErrUnknownOutcome, wsrpc.CodeInvalidParams, ""},
	{permission.ErrUnknownDefaultApproval, wsrpc.CodeInvalidParams, ""},
	{llm.ErrNoModel, wsrpc.CodeConfig, protocol.KindNoModel},
	{llm.ErrNoAPIKey, wsrpc.CodeConfig, protocol.KindNoAPIKey},
	{netproxy.ErrBadProxy, wsrpc.CodeConfig, ""}, // a bad SOCKS5_PROXY: no session engine is built
	// keys.*, vcs.* (keys.go, vcs_methods.go)
	{keychain.ErrUnavailable, wsrpc.CodeConfig, protocol.KindKeychainUnavailable},
	{keychain.ErrNotFound, wsrpc.CodeNotFound, ""},
	{keychain.ErrInvalidKey, wsrpc.CodeInvalidParams, ""},
	{keychain.ErrInvalidProvider, wsrpc.CodeInvalidParams, ""},
	{vcs.ErrTurnNotFound, wsrpc.CodeNotFound, ""},
	{vcs.ErrTurnExpired, wsrpc.CodeConflict, protocol.KindSnapshotExpired},
	{vcs.ErrClobbered, wsrpc.CodeConflict, protocol.KindClobbered},
	{vcs.ErrNoPreTurnSnapshot, wsrpc.CodeConflict, ""},
	{vcs.ErrDisabled, wsrpc.CodeConfig, protocol.KindVCSDisabled},
	{vcs.ErrInvalidMode, wsrpc.CodeInvalidParams, ""},
	{tools.ErrOutsideWorkspace, wsrpc.CodeForbidden, protocol.KindOutsideWorkspace},
	// mcp.* (mcp_methods.go)
	{mcp.ErrUnknownServer, wsrpc.CodeNotFound, ""},
	{mcp.ErrDuplicateServer, wsrpc.CodeConflict, protocol.KindExists},
	{mcp.ErrInvalidConfig, wsrpc.CodeInvalidParams, ""},
	{mcp.ErrCommandLine, wsrpc.CodeInvalidParams, ""},
	{mcp.ErrDisabled, wsrpc.CodeConflict, ""},
	{mcp.ErrClosed, wsrpc.CodeConflict, ""},
	{mcp.ErrUntrusted, wsrpc.CodeForbidden, protocol.KindUntrusted},
	{mcp.ErrStaleHash, wsrpc.CodeConflict, protocol.KindStaleHash},
	// mcp.login, mcp.logout (mcp_oauth.go)
	{mcp.ErrNotRemote, wsrpc.CodeInvalidParams, ""},
	{mcp.ErrStaticAuth, wsrpc.CodeConflict, ""},
	{mcp.ErrCallbackPort, wsrpc.CodeConflict, ""},
	{mcp.ErrNoSecrets, wsrpc.CodeConfig, protocol.KindKeychainUnavailable},
	{mcp.ErrLoginFailed, wsrpc.CodeConfig, ""},
	// project.trustGit, worktree.* (git_trust.go, worktree_methods.go)
	{backend.ErrGitStaleHash, wsrpc.CodeConflict, protocol.KindStaleHash},
	{backend.ErrWorktreeDirty, wsrpc.CodeConflict, protocol.KindUncommittedChanges},
	{backend.ErrGitUntrusted, wsrpc.CodeForbidden, protocol.KindUntrusted},
	// files.search (files.go)
	{errSuperseded, wsrpc.CodeConflict, protocol.KindSuperseded},
	// terminal.* (terminal_methods.go)
	{terminal.ErrNotFound, wsrpc.CodeNotFound, ""},
	{terminal.ErrOutsideProject, wsrpc.CodeForbidden, protocol.KindOutsideWorkspace},
	{terminal.ErrInvalid, wsrpc.CodeInvalidParams, ""},
	{terminal.ErrExited, wsrpc.CodeConflict, protocol.KindTerminalUnavailable},
	{terminal.ErrInputFull, wsrpc.CodeConflict, protocol.KindTerminalUnavailable},
	{terminal.ErrUnsupported, wsrpc.CodeConfig, protocol.KindUnsupported},
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
func wireError(err error) *wsrpc.WireError { return wsrpc.WireErrorOf(err, hostedErrorCodes) }
