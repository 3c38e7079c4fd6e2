package permission_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/tools"
)

// TestStaleMCPToolGrantsDropped: a stored always_tool grant of the lazy MCP
// mode's generic tool (which older sidecars recorded for an "always" given
// through it, and which then covered every MCP tool) or of an MCP tool by
// its registered name grants nothing: RestoreGrant and AllowToolForSession
// drop it, and the generic tool still asks.
func TestStaleMCPToolGrantsDropped(t *testing.T) {
	e := permission.New(permission.Options{})
	for _, n := range []string{"mcp_call_tool", "mcp__fs__write", "write_file", "mcp:fs/read"} {
		e.RestoreGrant(permission.SessionGrant{Kind: permission.GrantTool, Name: n})
	}
	e.AllowToolForSession("mcp_call_tool")
	require.Equal(t, []string{"mcp:fs/read", "write_file"}, e.SessionTools())
	meta := tools.Metadata{Category: "mcp", RiskLevel: tools.RiskHigh, Class: tools.ClassNetwork, RequiresApproval: true}
	for _, n := range []string{"mcp_call_tool", "mcp__fs__write", "mcp:fs/write"} {
		require.True(t, e.Evaluate(n, map[string]any{}, meta).NeedsUser, n)
	}
	require.True(t, e.Evaluate("mcp:fs/read", map[string]any{}, meta).Allowed)
}
