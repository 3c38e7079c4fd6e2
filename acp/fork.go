package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/protocol"
)

// forkMethod is the sidecar method session/fork uses.
const forkMethod = "session.fork"

var _ interface {
	UnstableForkSession(context.Context, sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error)
} = (*Agent)(nil)

// sessionCapabilities are the session methods offered at initialize:
// session/list, and session/fork (unstable in ACP) when the backend routes
// session.fork. Before any backend is connected this build's own server is
// assumed (it routes it); a backend of an older sidecar that owns the data
// dir does not, and session/fork is then not offered.
func (a *Agent) sessionCapabilities() sdk.SessionCapabilities {
	caps := sdk.SessionCapabilities{List: &sdk.SessionListCapabilities{}}
	if a.backendHas(forkMethod) {
		caps.Fork = &sdk.SessionForkCapabilities{}
	}
	return caps
}

// backendHas reports whether the connected backend routes method (true
// while none is connected: see sessionCapabilities).
func (a *Agent) backendHas(method string) bool {
	a.rpcMu.Lock()
	defer a.rpcMu.Unlock()
	return a.methods == nil || a.methods[method]
}

// UnstableForkSession implements ACP's session/fork (unstable): the
// sidecar's session.fork of the session's last finished turn (history,
// events, grants and settings up to it; files are not touched), opened in
// this connection like a new session, with the request's MCP servers. The
// source session need not be open here; cwd must be its project folder
// (the fork's history is about that workspace). A session whose last turn
// has not finished yet forks up to the turn before; one without a
// finished turn is refused.
func (a *Agent) UnstableForkSession(ctx context.Context, p sdk.UnstableForkSessionRequest) (sdk.UnstableForkSessionResponse, error) {
	if !a.backendHas(forkMethod) {
		return sdk.UnstableForkSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionFork)
	}
	mcps, err := forkMCP(p.McpServers)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, err
	}
	src, err := a.sessionInfo(ctx, string(p.SessionId))
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, wireError(err)
	}
	root, err := a.projectPath(ctx, src.ProjectID)
	if err != nil {
		return sdk.UnstableForkSessionResponse{}, wireError(err)
	}
	if !samePath(root, p.Cwd) {
		return sdk.UnstableForkSessionResponse{}, sdk.NewInvalidParams(map[string]any{
			"cwd": fmt.Sprintf("session %s belongs to %s: a fork works in the same folder", src.SessionID, root)})
	}
	var forked protocol.SessionCreateResult
	if err := a.call(ctx, forkMethod, protocol.SessionForkParams{SessionID: src.SessionID}, &forked); err != nil {
		return sdk.UnstableForkSessionResponse{}, wireError(err)
	}
	info := forked.Session
	s := newSession(forked.SessionID, root)
	s.lang = info.Lang
	// Like session/new: the editor has the history it forked; the copied
	// events are not shown again.
	if _, err := a.attach(ctx, s, info.LastSeq); err != nil {
		return sdk.UnstableForkSessionResponse{}, wireError(err)
	}
	if err := a.addMCP(ctx, s, mcps); err != nil {
		a.detach(s.id)
		return sdk.UnstableForkSessionResponse{}, wireError(err)
	}
	return sdk.UnstableForkSessionResponse{SessionId: sdk.SessionId(forked.SessionID), Modes: modeState(info.Mode)}, nil
}

// forkMCP reads session/fork's MCP servers (the unstable schema's type,
// the same JSON as session/new's) as session/new's are read.
func forkMCP(servers []sdk.UnstableMcpServer) ([]protocol.MCPServerConfig, error) {
	raw, err := json.Marshal(servers)
	if err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"mcpServers": err.Error()})
	}
	var stable []sdk.McpServer
	if err := json.Unmarshal(raw, &stable); err != nil {
		return nil, sdk.NewInvalidParams(map[string]any{"mcpServers": err.Error()})
	}
	return mcpConfigs(stable)
}

// samePath reports whether two folder paths name the same folder.
func samePath(a, b string) bool {
	clean := func(p string) string {
		p = filepath.Clean(p)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	return clean(a) == clean(b)
}
