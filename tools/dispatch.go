package tools

import (
	"net/url"
	"strings"
)

// Target is the tool a call really runs. For most calls it is the called
// tool with the call's arguments; a dispatcher's call (Spec.Dispatch, the
// lazy MCP mode's mcp_call_tool) resolves, once and before any permission
// decision, to the tool its arguments name. The engine then decides, cards,
// grants and runs the call as that tool — its grant key, metadata, arguments
// and handler — so an always_tool answer given through a dispatcher grants
// exactly the real tool, and a grant of one tool never covers another. A
// call that does not resolve is a tool error: no card, no grant, nothing
// runs.
type Target struct {
	Spec Spec   // the real tool: Name and GrantName for the card and the grant, Meta for the decision, Handler to run
	Args Args   // its arguments, decoded strictly against its own schema
	Via  string // the dispatcher the model called, "" for a direct call
}

// TargetOf resolves a call of spec with its normalized arguments: spec
// itself, or what its Dispatch names.
func TargetOf(spec Spec, args Args) (Target, error) {
	if spec.Dispatch == nil {
		return Target{Spec: spec, Args: args}, nil
	}
	t, err := spec.Dispatch(args)
	if err != nil {
		return Target{}, err
	}
	if t.Spec.Dispatch != nil || t.Spec.Handler == nil {
		return Target{}, Errorf("invalid_arguments", "%s cannot call %q", spec.Name, t.Spec.Name)
	}
	t.Via = spec.Name
	return t, nil
}

// GrantName is the key of the tool's permission decisions and always_tool
// grants: Grant, or the tool's name.
func (s Spec) GrantName() string {
	if s.Grant != "" {
		return s.Grant
	}
	return s.Name
}

// MCPGrantPrefix starts the grant key of every MCP tool.
const MCPGrantPrefix = "mcp:"

// MCPGrant is the grant key of an MCP server's tool: "mcp:<server>/<tool>",
// each part by its original name, escaped as a URL path segment (so
// "mcp:fs/read_file"; a "/" in either name is "%2F"). Unlike the registered
// name (mcp__<server>__<tool>, sanitized, cut and de-duplicated against
// the other connected tools), it names one tool of one server whatever
// else is connected, and it is the same whether the tool is called directly
// or through mcp_call_tool.
func MCPGrant(server, tool string) string {
	return MCPGrantPrefix + url.PathEscape(server) + "/" + url.PathEscape(tool)
}

// StaleToolGrant reports whether a stored always_tool grant has a form that
// grants nothing any more and is dropped when grants are restored: a grant
// of the lazy MCP mode's generic tool (older sidecars keyed an "always" for
// a call through it by "mcp_call_tool", which covered every MCP tool), or
// of an MCP tool by its registered name ("mcp__<server>__<tool>", which can
// pass to another tool when the connected tools change). MCP tools are
// granted by MCPGrant now; such a grant asks again.
func StaleToolGrant(name string) bool {
	return name == "mcp_call_tool" || name == "mcp_search_tools" || strings.HasPrefix(name, "mcp__")
}
