package mcp

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

// Names of the lazy-mode meta tools (seed §15.4).
const (
	SearchToolName = "mcp_search_tools"
	CallToolName   = "mcp_call_tool"
)

// callParams is mcp_call_tool's input schema, written out: its arguments
// member is whatever the named tool takes, an open object that
// tools.ParamsOf (which closes every object) cannot say.
const callParams = `{"type":"object","properties":{"name":{"type":"string","description":"the tool's name"},"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}`

// searchLoad is how many matches a search loads.
const searchLoad = 8

var (
	//go:embed search_tools.md
	searchDescription string
	//go:embed call_tool.md
	callDescription string
)

func (m *Manager) searchSpec() tools.Spec {
	return tools.Spec{
		Name: SearchToolName,
		Schema: llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
			Name: SearchToolName, Description: strings.TrimSpace(searchDescription),
			Parameters: tools.ParamsOf[searchArgs](),
		}},
		Meta:    tools.Metadata{Category: "mcp", RiskLevel: tools.RiskLow, Class: tools.ClassRead, Capabilities: []string{"mcp"}},
		Source:  "mcp",
		Handler: m.searchHandler,
	}
}

func (m *Manager) callSpec() tools.Spec {
	return tools.Spec{
		Name: CallToolName,
		Schema: llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
			Name: CallToolName, Description: strings.TrimSpace(callDescription),
			Parameters: json.RawMessage(callParams),
		}},
		Meta:     mcpMeta,
		Source:   "mcp",
		Handler:  m.callHandler,
		Dispatch: m.dispatch,
	}
}

// searchArgs are mcp_search_tools' arguments; the schema is reflected from
// them.
type searchArgs struct {
	Query string `json:"query" jsonschema:"required" jsonschema_description:"keywords describing the tool you need"`
}

// SearchResult is one match of mcp_search_tools.
type SearchResult struct {
	Name        string          `json:"name"`
	Server      string          `json:"server"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

func (m *Manager) searchHandler(_ context.Context, call tools.Call) (any, error) {
	var a searchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	found := m.Search(a.Query, searchLoad)
	if len(found) == 0 {
		return "No MCP tool matches " + fmt.Sprintf("%q", a.Query) + ". Try other keywords.", nil
	}
	return map[string]any{
		"loaded": true,
		"note":   "These tools are loaded: call them by name from the next step on, or through " + CallToolName + ".",
		"tools":  found,
	}, nil
}

// Search ranks the connected tools against the query's keywords (names
// count more than descriptions) and loads the best limit of them into the
// attached registries (lazy mode), evicting the least recently used beyond
// MaxLoaded.
func (m *Manager) Search(query string, limit int) []SearchResult {
	terms := strings.Fields(strings.ToLower(strings.NewReplacer("_", " ", "-", " ", "/", " ", ".", " ").Replace(query)))
	m.mu.Lock()
	defer m.mu.Unlock()
	type scored struct {
		r     toolRef
		score int
	}
	var hits []scored
	for _, n := range m.names {
		r := m.index[n]
		name := strings.ToLower(r.server + " " + r.tool + " " + r.name)
		desc := strings.ToLower(r.desc)
		score := 0
		for _, t := range terms {
			if strings.Contains(name, t) {
				score += 3
			}
			if strings.Contains(desc, t) {
				score++
			}
		}
		if score > 0 || len(terms) == 0 {
			hits = append(hits, scored{r, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]SearchResult, 0, len(hits))
	for _, h := range hits {
		out = append(out, SearchResult{Name: h.r.name, Server: h.r.server, Description: h.r.desc, Parameters: h.r.schema})
		if m.lazy {
			m.loadLocked(h.r.name)
		}
	}
	if m.lazy {
		m.applyLocked()
	}
	return out
}

// loadLocked marks a tool loaded and most recently used; syncLocked then
// registers it.
func (m *Manager) loadLocked(name string) {
	m.loaded = slices.DeleteFunc(m.loaded, func(n string) bool { return n == name })
	m.loaded = append(m.loaded, name)
	if over := len(m.loaded) - m.opts.Lazy.MaxLoaded; over > 0 {
		m.loaded = slices.Delete(m.loaded, 0, over)
	}
}

// markUsedLocked moves a loaded tool to the most recently used end.
func (m *Manager) markUsedLocked(name string) {
	if i := slices.Index(m.loaded, name); i >= 0 && i != len(m.loaded)-1 {
		m.loaded = append(slices.Delete(m.loaded, i, i+1), name)
	}
}

// callHandler runs a call of mcp_call_tool for a caller that did not
// resolve it first; the engine resolves it with dispatch and runs the real
// tool.
func (m *Manager) callHandler(ctx context.Context, call tools.Call) (any, error) {
	a, err := m.callSpec().NormalizeArgs(call.Args)
	if err != nil {
		return nil, err
	}
	t, err := m.dispatch(a)
	if err != nil {
		return nil, err
	}
	return t.Spec.Handler(ctx, tools.Call{ID: call.ID, Name: t.Spec.Name, Args: t.Args.Canonical})
}

// dispatch resolves a call of mcp_call_tool to the tool it names, with that
// tool's own spec (grant key, metadata, handler) and its arguments decoded
// strictly against its own schema, so the call is decided, carded, granted
// and run as that tool (tools.Target). An unknown or ambiguous name, or
// arguments that are not a JSON object, are a tool error.
func (m *Manager) dispatch(args tools.Args) (tools.Target, error) {
	name, _ := args.Map["name"].(string)
	raw, err := callArguments(args.Canonical)
	if err != nil {
		return tools.Target{}, err
	}
	m.mu.Lock()
	r, err := m.resolveLocked(name)
	m.mu.Unlock()
	if err != nil {
		return tools.Target{}, err
	}
	spec := m.toolSpec(r)
	a, err := spec.NormalizeArgs(raw)
	if err != nil {
		return tools.Target{}, err
	}
	return tools.Target{Spec: spec, Args: a}, nil
}

// callArguments is the "arguments" member of a canonical mcp_call_tool
// call: a JSON object, "{}" when absent.
func callArguments(canonical json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(canonical, &a); err != nil {
		return nil, &tools.ToolError{Type: "invalid_arguments", Err: fmt.Errorf("%w: %v", tools.ErrInvalidArgs, err)}
	}
	raw := bytes.TrimSpace(a.Arguments)
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' {
		var v any
		_ = json.Unmarshal(raw, &v)
		return nil, &tools.ToolError{Type: "invalid_arguments", Err: fmt.Errorf("%w: arguments: must be a JSON object (the tool's arguments), got %s", tools.ErrInvalidArgs, jsonKind(v))}
	}
	return raw, nil
}

// resolveLocked finds a tool by registered name, "<server>/<tool>", or a
// tool name unique across servers.
func (m *Manager) resolveLocked(name string) (toolRef, error) {
	name = strings.TrimSpace(name)
	if r, ok := m.index[name]; ok {
		return r, nil
	}
	var matches []toolRef
	for _, n := range m.names {
		r := m.index[n]
		if r.server+"/"+r.tool == name || r.tool == name {
			matches = append(matches, r)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return toolRef{}, &tools.ToolError{Type: "not_found", Err: fmt.Errorf("%w: %q; search with %s first", ErrUnknownTool, name, SearchToolName)}
	}
	var names []string
	for _, r := range matches {
		names = append(names, r.name)
	}
	return toolRef{}, &tools.ToolError{Type: "invalid_arguments", Err: fmt.Errorf("%w: %q is ambiguous: %s", ErrUnknownTool, name, strings.Join(names, ", "))}
}
