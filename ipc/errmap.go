package ipc

import (
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/netproxy"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/terminal"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/vcs"
)

type errCode struct {
	err  error
	code int
}

// hostedErrors maps the sentinels of the packages the server hosts to wire
// codes (this package's own are in sentinelCodes).
var hostedErrors = []errCode{
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

func hostedErrorCodes() []errCode { return hostedErrors }
