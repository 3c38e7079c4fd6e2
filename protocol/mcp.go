package protocol

import (
	"encoding/json"
	"strings"
)

// MCPServerConfig is one server entry in .agent/mcp.json's format: name,
// type (stdio, http, sse), command (a string or an array), args, env, cwd,
// url, headers, enabled or disabled, timeout (ms) and any unknown fields,
// kept as written (${VAR} references unexpanded). It is kept as raw JSON so
// that unknown fields survive.
type MCPServerConfig json.RawMessage

// MarshalJSON writes the entry as is.
func (c MCPServerConfig) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return c, nil
}

// UnmarshalJSON keeps the entry as is.
func (c *MCPServerConfig) UnmarshalJSON(b []byte) error {
	*c = append((*c)[:0], b...)
	return nil
}

// MCPRun is a server's trust card: what it runs or contacts, ${VAR}
// references unexpanded.
type MCPRun struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Vars are the variables the config refers to; they expand only once
	// the server is trusted.
	Vars []string `json:"vars,omitempty"`
	// SecretVars are those of Vars that never expand (the sidecar's
	// secrets).
	SecretVars []string `json:"secretVars,omitempty"`
}

// MCPStatus is an MCP server's state.
type MCPStatus struct {
	Name string `json:"name"`
	// Type is stdio, http, sse or builtin.
	Type string `json:"type"`
	// State is disabled, untrusted, connecting, connected, failed,
	// needs_auth (a remote server wants a sign-in: mcp.login) or closed.
	State   string `json:"state"`
	Enabled bool   `json:"enabled"`
	// Tools is the number of tools the server offers.
	Tools     int    `json:"tools"`
	LastError string `json:"lastError,omitempty"`
	Lazy      bool   `json:"lazy"`
	// Trust is trusted, untrusted (never approved) or changed (approved,
	// then the config changed).
	Trust string `json:"trust"`
	// Hash is what mcp.trust approves; absent for builtin presets.
	Hash string `json:"hash,omitempty"`
	// Run is the trust card; absent for builtin presets.
	Run *MCPRun `json:"run,omitempty"`
}

// MCPServer is a server in mcp.list and the mcp.* results.
type MCPServer struct {
	MCPStatus
	// ToolNames are the names registered for the model (mcp__<server>__<tool>).
	ToolNames []string `json:"toolNames"`
}

// MCPWarning is a problem of a project's MCP config file.
type MCPWarning struct {
	File    string `json:"file"`
	Server  string `json:"server,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String is the warning as one line: file, server, field and message.
func (w MCPWarning) String() string {
	var b strings.Builder
	b.WriteString(w.File)
	if w.Server != "" {
		b.WriteString(": server " + w.Server)
	}
	if w.Field != "" {
		b.WriteString(": field " + w.Field)
	}
	b.WriteString(": " + w.Message)
	return b.String()
}

// MCPListResult is the result of mcp.list.
type MCPListResult struct {
	Servers    []MCPServer       `json:"servers"`
	Configs    []MCPServerConfig `json:"configs"`
	Warnings   []MCPWarning      `json:"warnings"`
	ConfigPath string            `json:"configPath"`
}

// MCPAddParams are the params of mcp.add.
type MCPAddParams struct {
	ProjectID string          `json:"projectId" rpc:"required"`
	Config    MCPServerConfig `json:"config" rpc:"required"`
}

// MCPUpdateParams are the params of mcp.update.
type MCPUpdateParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	// Name is the server's current name; config.name may rename it.
	Name   string          `json:"name" rpc:"required"`
	Config MCPServerConfig `json:"config" rpc:"required"`
}

// MCPNameParams are the params of mcp.remove, mcp.refresh and mcp.untrust.
type MCPNameParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	Name      string `json:"name" rpc:"required"`
}

// MCPTrustParams are the params of mcp.trust.
type MCPTrustParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	Name      string `json:"name" rpc:"required"`
	// Hash is the one the trust card showed.
	Hash string `json:"hash" rpc:"required"`
}

// MCPServerResult is the result of mcp.add, mcp.update, mcp.refresh,
// mcp.trust and mcp.untrust.
type MCPServerResult struct {
	Server MCPServer `json:"server"`
	// Warnings are the entry's non-fatal problems.
	Warnings []MCPWarning `json:"warnings"`
}

// MCPSessionAddParams are the params of mcp.sessionAdd: servers a client
// passes for one session (an ACP editor's own servers, from session/new).
type MCPSessionAddParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// Servers are entries in .agent/mcp.json's format (stdio, http or sse;
	// not builtin). They replace the session's earlier ones.
	Servers []MCPServerConfig `json:"servers" rpc:"required"`
}

// MCPSessionAddResult is the result of mcp.sessionAdd.
type MCPSessionAddResult struct {
	// Servers are the session's servers, in the order given: connected (or
	// failed) when the project remembers their trust, else untrusted.
	Servers []MCPServer `json:"servers"`
}

// MCPSessionTrustParams are the params of mcp.sessionTrust.
type MCPSessionTrustParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Name      string `json:"name" rpc:"required"`
	// Hash is the one the trust card showed.
	Hash string `json:"hash" rpc:"required"`
	// Remember keeps the approval of this hash for the session's project
	// (later sessions with the same config do not ask); false trusts it for
	// this session only.
	Remember bool `json:"remember,omitempty"`
}
