package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// The editor's MCP servers (session/new's and session/load's mcpServers)
// are the session's own (mcp.sessionAdd): never written to the project's
// .agent/mcp.json, never stored (env and header values included), bound to
// this process's connection to the sidecar. They follow the trust rule of
// the project's servers: none is started or contacted until the user
// approved its exact config. Those whose trust the project remembers
// connect during session/new; for each other one, the session's first
// prompt asks the editor first (session/request_permission; the editor
// knows the session by then), with a card that names the command line or
// URL and only the names of its env variables and headers. "Allow once"
// trusts it for the session, "always" for every later session of the
// project with the same config (mcp.sessionTrust remember), a refusal
// leaves it unstarted and its tools unoffered. When the backend changes
// hands, the servers are given to the new one, and those the user allowed
// are trusted again without asking.

// mcpConfigs turns the editor's MCP servers into mcp.sessionAdd's entries
// (.agent/mcp.json's format); an ACP-transport server is refused (the
// capability is not offered).
func mcpConfigs(servers []sdk.McpServer) ([]protocol.MCPServerConfig, error) {
	out := make([]protocol.MCPServerConfig, 0, len(servers))
	for i, s := range servers {
		var entry map[string]any
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, e := range s.Stdio.Env {
				env[e.Name] = e.Value
			}
			entry = map[string]any{"name": s.Stdio.Name, "type": "stdio", "command": append([]string{s.Stdio.Command}, s.Stdio.Args...), "env": env}
		case s.Http != nil:
			entry = map[string]any{"name": s.Http.Name, "type": "http", "url": s.Http.Url, "headers": headerMap(s.Http.Headers)}
		case s.Sse != nil:
			entry = map[string]any{"name": s.Sse.Name, "type": "sse", "url": s.Sse.Url, "headers": headerMap(s.Sse.Headers)}
		default:
			return nil, sdk.NewInvalidParams(map[string]any{fmt.Sprintf("mcpServers[%d]", i): "only stdio, http and sse MCP servers are supported"})
		}
		b, err := json.Marshal(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func headerMap(hs []sdk.HttpHeader) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// editorMCP is the state of a session's editor MCP servers; guarded by
// the session's mu, except ask.
type editorMCP struct {
	cfgs    []protocol.MCPServerConfig
	pending []protocol.MCPServer // untrusted, not asked yet
	allowed map[string]bool      // hashes the user allowed in this process
}

// addMCP gives the session's editor servers to the backend and notes the
// ones to ask about.
func (a *Agent) addMCP(ctx context.Context, s *session, cfgs []protocol.MCPServerConfig) error {
	if len(cfgs) == 0 {
		return nil
	}
	var res protocol.MCPSessionAddResult
	err := a.call(ctx, "mcp.sessionAdd", protocol.MCPSessionAddParams{SessionID: s.id, Servers: cfgs}, &res)
	if client.Code(err) == protocol.CodeMethodNotFound {
		// A joined sidecar older than session servers: none is started.
		a.log.Warn("acp: the sidecar that owns the data dir cannot run the editor's MCP servers; they are not started", "session", s.id)
		return nil
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.mcp = &editorMCP{cfgs: cfgs, allowed: map[string]bool{}}
	s.mcp.pending = untrusted(res.Servers)
	s.mu.Unlock()
	return nil
}

func untrusted(ss []protocol.MCPServer) []protocol.MCPServer {
	var out []protocol.MCPServer
	for _, sv := range ss {
		if sv.State == "untrusted" {
			out = append(out, sv)
		}
	}
	return out
}

// readdMCP gives the session's editor servers to a new backend; those the
// user allowed in this process are trusted there for the session again.
func (a *Agent) readdMCP(ctx context.Context, s *session) {
	s.mu.Lock()
	m := s.mcp
	var cfgs []protocol.MCPServerConfig
	var allowed map[string]bool
	if m != nil {
		cfgs, allowed = m.cfgs, maps.Clone(m.allowed)
	}
	s.mu.Unlock()
	if m == nil {
		return
	}
	var res protocol.MCPSessionAddResult
	if err := a.call(ctx, "mcp.sessionAdd", protocol.MCPSessionAddParams{SessionID: s.id, Servers: cfgs}, &res); err != nil {
		a.log.Warn("acp: give the editor's MCP servers to the new owner", "session", s.id, "err", err)
		return
	}
	for _, sv := range untrusted(res.Servers) {
		if allowed[sv.Hash] {
			if err := a.trustMCP(ctx, s, sv, false); err != nil {
				a.log.Warn("acp: trust an allowed MCP server on the new owner", "session", s.id, "server", sv.Name, "err", err)
			}
		}
	}
}

// askMCP puts each editor server that waits for trust to the editor, once,
// before the session's first turn; a prompt cancelled meanwhile leaves the
// rest for the next one.
func (a *Agent) askMCP(ctx context.Context, s *session) error {
	s.askMCP.Lock()
	defer s.askMCP.Unlock()
	for {
		s.mu.Lock()
		if s.mcp == nil || len(s.mcp.pending) == 0 {
			s.mu.Unlock()
			return nil
		}
		sv := s.mcp.pending[0]
		s.mu.Unlock()
		out, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(s.id), ToolCall: mcpCard(sv), Options: mcpOptions()})
		if err != nil {
			return err
		}
		var id sdk.PermissionOptionId
		if out.Outcome.Selected != nil {
			id = out.Outcome.Selected.OptionId
		}
		if id == optAllowOnce || id == optAllowAlways {
			if err := a.trustMCP(ctx, s, sv, id == optAllowAlways); err != nil {
				return err
			}
		} else {
			a.log.Info("acp: the user refused an MCP server of the editor; it is not started", "session", s.id, "server", sv.Name)
		}
		s.mu.Lock()
		s.mcp.pending = slices.DeleteFunc(s.mcp.pending, func(p protocol.MCPServer) bool { return p.Name == sv.Name })
		s.mu.Unlock()
	}
}

// trustMCP approves a server on the backend, which starts it.
func (a *Agent) trustMCP(ctx context.Context, s *session, sv protocol.MCPServer, remember bool) error {
	var res protocol.MCPServerResult
	p := protocol.MCPSessionTrustParams{SessionID: s.id, Name: sv.Name, Hash: sv.Hash, Remember: remember}
	if err := a.call(ctx, "mcp.sessionTrust", p, &res); err != nil {
		return err
	}
	s.mu.Lock()
	if s.mcp != nil {
		s.mcp.allowed[sv.Hash] = true
	}
	s.mu.Unlock()
	if res.Server.State == "failed" {
		a.log.Warn("acp: an MCP server of the editor did not start", "session", s.id, "server", sv.Name, "err", res.Server.LastError)
	}
	return nil
}

func mcpOptions() []sdk.PermissionOption {
	return []sdk.PermissionOption{
		{OptionId: optAllowOnce, Name: "Start it for this session", Kind: sdk.PermissionOptionKindAllowOnce},
		{OptionId: optAllowAlways, Name: "Always start it in this project", Kind: sdk.PermissionOptionKindAllowAlways},
		{OptionId: optRejectOnce, Name: "Don't start it", Kind: sdk.PermissionOptionKindRejectOnce},
	}
}

// mcpCard is the question about one server: what it runs or contacts, the
// names of its env variables and headers, never their values.
func mcpCard(sv protocol.MCPServer) sdk.ToolCallUpdate {
	var b strings.Builder
	kind := sdk.ToolKindFetch
	r := protocol.MCPRun{}
	if sv.Run != nil {
		r = *sv.Run
	}
	if r.Command != "" {
		kind = sdk.ToolKindExecute
		words := []string{shellWord(r.Command)}
		for _, w := range r.Args {
			words = append(words, shellWord(w))
		}
		fmt.Fprintf(&b, "Command: %s\n", strings.Join(words, " "))
	}
	if r.URL != "" {
		fmt.Fprintf(&b, "URL (%s): %s\n", sv.Type, r.URL)
	}
	if len(r.Env) > 0 {
		fmt.Fprintf(&b, "Environment (values not shown): %s\n", strings.Join(slices.Sorted(maps.Keys(r.Env)), ", "))
	}
	if len(r.Headers) > 0 {
		fmt.Fprintf(&b, "Headers (values not shown): %s\n", strings.Join(slices.Sorted(maps.Keys(r.Headers)), ", "))
	}
	b.WriteString("The editor passed this MCP server for the session. Nothing runs or is contacted until you allow it; its tools then ask before each call.")
	title := fmt.Sprintf("Start the MCP server %q of the editor?", sv.Name)
	return sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId("mcp-server-" + sv.Name),
		Title:      sdk.Ptr(oneLine(engine.DisplayText(title))),
		Kind:       sdk.Ptr(kind),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Content:    []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(engine.DisplayText(b.String())))},
	}
}

// shellWord quotes a command word that a reader could misread.
func shellWord(w string) string {
	if w == "" || strings.ContainsAny(w, " \t\n\"'\\$`") {
		return strconv.Quote(w)
	}
	return w
}
