package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLazyParams pins what the model is told for the two lazy MCP tools:
// mcp_search_tools' schema is reflected (closed), mcp_call_tool's keeps its
// arguments open.
func TestLazyParams(t *testing.T) {
	m := &Manager{}
	require.JSONEq(t, `{"type":"object","properties":{"query":{"type":"string","description":"keywords describing the tool you need"}},"required":["query"],"additionalProperties":false}`,
		string(m.searchSpec().Schema.Function.Parameters))
	var call struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(m.callSpec().Schema.Function.Parameters, &call))
	require.NotContains(t, call.Properties["arguments"], "additionalProperties")
}
