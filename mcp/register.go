package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

// toolRef is one tool of a connected server under its registered name.
type toolRef struct {
	name   string // registered name, mcp__<server>__<tool>
	server string
	tool   string // the server's own name for it
	desc   string
	schema json.RawMessage
}

// mcpMeta is the metadata of every server tool (seed §15.3).
var mcpMeta = tools.Metadata{
	Category: "mcp", RiskLevel: tools.RiskHigh, Class: tools.ClassNetwork,
	Capabilities: []string{"mcp"}, RequiresApproval: true,
}

// Attach registers this project's MCP tools (or, in lazy mode, the two meta
// tools and the loaded tools) into reg, now and after every later change.
// Several registries (one per session of the project) may be attached.
func (m *Manager) Attach(reg *tools.Registry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.regs, reg) {
		m.regs = append(m.regs, reg)
	}
	for _, spec := range m.desiredLocked() {
		if err := reg.Register(spec); err != nil {
			m.log.Error("mcp register", "tool", spec.Name, "err", err)
		}
		m.registered[spec.Name] = true
	}
}

// Detach removes this manager's tools from reg and stops updating it.
func (m *Manager) Detach(reg *tools.Registry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.Index(m.regs, reg)
	if i < 0 {
		return
	}
	m.regs = slices.Delete(m.regs, i, i+1)
	for n := range m.registered {
		reg.Remove(n)
	}
}

// syncLocked recomputes the names of every connected tool, decides lazy
// mode, and brings every attached registry in line.
func (m *Manager) syncLocked() {
	m.reindexLocked()
	m.applyLocked()
}

// reindexLocked recomputes the names of every connected tool and lazy mode.
func (m *Manager) reindexLocked() {
	var keys []toolKey
	refs := map[toolKey]toolRef{}
	for _, n := range m.order {
		s := m.servers[n]
		if s.conn == nil {
			continue
		}
		for _, t := range s.tools {
			k := toolKey{n, t.Name}
			keys = append(keys, k)
			refs[k] = toolRef{server: n, tool: t.Name, desc: t.Description, schema: toolSchema(t)}
		}
	}
	names := assignNames(keys)
	m.index = make(map[string]toolRef, len(keys))
	m.names = m.names[:0]
	for _, k := range keys {
		r := refs[k]
		r.name = names[k]
		m.index[r.name] = r
		m.names = append(m.names, r.name)
	}
	m.lazy = m.lazyWanted()
	if m.lazy {
		m.loaded = slices.DeleteFunc(m.loaded, func(n string) bool { _, ok := m.index[n]; return !ok })
	} else {
		m.loaded = nil
	}
}

// applyLocked brings every attached registry in line with the index.
func (m *Manager) applyLocked() {
	desired := m.desiredLocked()
	want := make(map[string]bool, len(desired))
	for _, s := range desired {
		want[s.Name] = true
	}
	for _, reg := range m.regs {
		for n := range m.registered {
			if !want[n] {
				reg.Remove(n)
			}
		}
		for _, spec := range desired {
			if err := reg.Register(spec); err != nil {
				m.log.Error("mcp register", "tool", spec.Name, "err", err)
			}
		}
	}
	m.registered = want
}

// desiredLocked is the specs the registries should hold: every connected
// tool, or in lazy mode the meta tools and the loaded tools.
func (m *Manager) desiredLocked() []tools.Spec {
	var out []tools.Spec
	if m.lazy {
		out = append(out, m.searchSpec(), m.callSpec())
		for _, n := range m.loaded {
			out = append(out, m.toolSpec(m.index[n]))
		}
		return out
	}
	for _, n := range m.names {
		out = append(out, m.toolSpec(m.index[n]))
	}
	return out
}

// lazyWanted decides lazy mode from the option, the environment and the
// size of the connected tools.
func (m *Manager) lazyWanted() bool {
	if e := m.opts.Lazy.Enabled; e != nil {
		return *e
	}
	chars := 0
	for _, r := range m.index {
		chars += len(r.name) + len(r.desc) + len(r.schema)
	}
	return len(m.index) > m.opts.Lazy.ThresholdTools || chars > m.opts.Lazy.ThresholdChars
}

func (m *Manager) toolSpec(r toolRef) tools.Spec {
	desc := r.desc
	if desc == "" {
		desc = "Tool " + r.tool + " of the MCP server " + r.server + "."
	}
	return tools.Spec{
		Name: r.name,
		Schema: llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
			Name: r.name, Description: desc, Parameters: r.schema,
		}},
		Meta:    mcpMeta,
		Source:  "mcp:" + r.server,
		Handler: m.handler(r.server, r.tool, r.name),
		Grant:   tools.MCPGrant(r.server, r.tool),
	}
}

// toolSchema is the tool's input schema as the provider wants it: a JSON
// object schema, never empty.
func toolSchema(t mcp.Tool) json.RawMessage {
	var raw json.RawMessage
	if len(t.RawInputSchema) > 0 {
		raw = t.RawInputSchema
	} else if b, err := json.Marshal(t.InputSchema); err == nil {
		raw = b
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if obj["type"] == nil {
		obj["type"] = "object"
	}
	if obj["type"] == "object" && obj["properties"] == nil {
		obj["properties"] = map[string]any{}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b
}

func (m *Manager) handler(server, tool, name string) tools.Handler {
	return func(ctx context.Context, call tools.Call) (any, error) {
		return m.callTool(ctx, server, tool, name, call.Args)
	}
}

// normalizeFor applies to a call of the named tool the same strict decode
// the engine applies to every call (a no-op for arguments the engine already
// normalized; mcp_call_tool's nested arguments get it here), against the
// tool's schema: the canonical object it returns is what the server gets.
func (m *Manager) normalizeFor(name string, args json.RawMessage) (json.RawMessage, error) {
	m.mu.Lock()
	schema := m.index[name].schema
	m.mu.Unlock()
	a, err := tools.NormalizeArgs(args, schema, tools.SchemaUnknown)
	if err != nil {
		return nil, err
	}
	return a.Canonical, nil
}

// callTool calls a server's tool with the call timeout, and converts the
// result for the model.
func (m *Manager) callTool(ctx context.Context, server, tool, name string, args json.RawMessage) (any, error) {
	body, err := m.normalizeFor(name, args)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	s, ok := m.servers[server]
	var c *conn
	timeout := m.opts.CallTimeout
	state, lastErr := StateClosed, ""
	if ok {
		c, state, lastErr = s.conn, s.state, s.lastErr
		if s.cfg.Timeout > 0 {
			timeout = s.cfg.Timeout
		}
	}
	m.markUsedLocked(name)
	m.mu.Unlock()
	if c == nil {
		msg := fmt.Sprintf("MCP server %s is %s", server, state)
		if lastErr != "" {
			msg += ": " + lastErr
		}
		return nil, &tools.ToolError{Type: "unavailable", Err: fmt.Errorf("%w: %s", ErrNotConnected, msg)}
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.call(cctx, tool, body)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return nil, &tools.ToolError{Type: "timeout", Err: fmt.Errorf("MCP tool %s timed out after %s (MCP_CALL_TIMEOUT_MS)", name, timeout)}
		case wantsSignIn(err): // oauth.go
			m.signInLost(c, err)
			return nil, &tools.ToolError{Type: "unavailable", Err: fmt.Errorf("MCP server %s wants a new sign-in (mcp.login): %v", server, err)}
		case transportGone(err), transportFailed(err) && !c.alive(context.WithoutCancel(ctx)):
			c.lost(m.dialer, err)
			return nil, &tools.ToolError{Type: "unavailable", Err: fmt.Errorf("%w: %s: %v", ErrServerDied, server, err)}
		}
		return nil, &tools.ToolError{Type: "mcp_error", Err: fmt.Errorf("MCP tool %s: %w", name, err)}
	}
	return convertResult(name, res)
}
