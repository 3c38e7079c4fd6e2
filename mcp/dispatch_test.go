//go:build !windows

package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/tools"
)

// TestCallToolDispatchesToTheRealTool: in lazy mode mcp_call_tool resolves
// (tools.TargetOf) to the MCP tool it names, with that tool's spec: its
// registered name, its grant key "mcp:<server>/<tool>" (the same as the
// loaded tool's, called directly), its metadata and its own arguments
// decoded against its schema. Different tools have different keys, and a
// grant of one, or of the builtin of the same name, covers no other. A
// malformed call is a tool error, and nothing runs.
func TestCallToolDispatchesToTheRealTool(t *testing.T) {
	t.Setenv("ZQAGENT_MCP_LAZY", "")
	marks := t.TempDir()
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "big", "-extra-tools", "20", "-mark-dir", marks)}, Options{Lazy: LazyOptions{ThresholdTools: 16}})
	require.NoError(t, m.Connect(context.Background(), "big"))
	require.True(t, stateOf(m, "big").Lazy)
	call, ok := reg.Lookup(CallToolName)
	require.True(t, ok)

	target := func(args string) (tools.Target, error) {
		a, err := call.NormalizeArgs(json.RawMessage(args))
		require.NoError(t, err, args)
		return tools.TargetOf(call, a)
	}
	echo, err := target(`{"name":"big/echo","arguments":{"text":"hi"}}`)
	require.NoError(t, err)
	require.Equal(t, "mcp__big__echo", echo.Spec.Name)
	require.Equal(t, "mcp:big/echo", echo.Spec.GrantName())
	require.Equal(t, CallToolName, echo.Via)
	require.Equal(t, mcpMeta, echo.Spec.Meta)
	require.Equal(t, `{"text":"hi"}`, string(echo.Args.Canonical))
	for _, name := range []string{"echo", "mcp__big__echo"} {
		again, err := target(`{"name":"` + name + `","arguments":{"text":"x"}}`)
		require.NoError(t, err)
		require.Equal(t, "mcp:big/echo", again.Spec.GrantName(), name)
	}

	// Loaded and called directly: the same key.
	_, err = callTool(t, reg, SearchToolName, `{"query":"echo"}`)
	require.NoError(t, err)
	direct, ok := reg.Lookup("mcp__big__echo")
	require.True(t, ok)
	require.Equal(t, echo.Spec.GrantName(), direct.GrantName())
	direct2, err := tools.TargetOf(direct, tools.Args{})
	require.NoError(t, err)
	require.Empty(t, direct2.Via)

	// A grant of echo covers echo, not write_mark; the server's run_shell
	// is its own tool, not covered by grants of the builtin run_shell.
	write, err := target(`{"name":"write_mark","arguments":{"name":"x"}}`)
	require.NoError(t, err)
	shell, err := target(`{"name":"run_shell","arguments":{"command":"ls"}}`)
	require.NoError(t, err)
	require.Equal(t, "mcp__big__run_shell", shell.Spec.Name)
	require.Equal(t, "mcp:big/run_shell", shell.Spec.GrantName())
	perms := permission.New(permission.Options{})
	perms.AllowToolForSession(echo.Spec.GrantName())
	perms.AllowToolForSession("run_shell")
	perms.AllowCommandForSession("ls")
	decide := func(tg tools.Target) permission.Decision {
		return perms.Evaluate(tg.Spec.GrantName(), tg.Args.Map, tg.Spec.Meta)
	}
	require.True(t, decide(echo).Allowed)
	require.True(t, decide(direct2).Allowed)
	require.True(t, decide(write).NeedsUser, "a grant of echo covers write_mark")
	require.True(t, decide(shell).NeedsUser, "a grant of the builtin run_shell covers the server's")

	// Malformed calls: a tool error, no target.
	for _, tc := range []struct{ args, typ string }{
		{`{"name":"nope"}`, "not_found"},
		{`{"name":"big/nope","arguments":{}}`, "not_found"},
		{`{"name":"echo","arguments":["hi"]}`, "invalid_arguments"},
		{`{"name":"echo","arguments":"{\"text\":\"hi\"}"}`, "invalid_arguments"},
		{`{"name":"echo","arguments":{"text":5}}`, "invalid_arguments"},
		{`{"name":"echo","arguments":{}}`, "invalid_arguments"},
	} {
		a, err := call.NormalizeArgs(json.RawMessage(tc.args))
		if err == nil {
			_, err = tools.TargetOf(call, a)
		}
		require.Error(t, err, tc.args)
		require.Equal(t, tc.typ, tools.ErrorType(err), "%s: %v", tc.args, err)
	}
	// arguments: null is refused by the dispatcher itself.
	_, err = m.dispatch(tools.Args{Map: map[string]any{"name": "echo", "arguments": nil}, Canonical: json.RawMessage(`{"arguments":null,"name":"echo"}`)})
	require.Equal(t, "invalid_arguments", tools.ErrorType(err), "%v", err)
	require.ErrorContains(t, err, "must be a JSON object")

	// The handler runs exactly the resolved tool.
	out, err := write.Spec.Handler(context.Background(), tools.Call{ID: "c1", Name: write.Spec.Name, Args: write.Args.Canonical})
	require.NoError(t, err)
	require.Equal(t, "marked x", out)
	_, err = os.Stat(filepath.Join(marks, "x"))
	require.NoError(t, err)
	entries, err := os.ReadDir(marks)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only write_mark ran")
}

// TestOldMCPGrantsAreDropped: tool grants of the forms older sidecars stored
// for MCP tools (the generic mcp_call_tool, a tool's registered name) are
// dropped when restored; the new form is kept.
func TestOldMCPGrantsAreDropped(t *testing.T) {
	perms := permission.New(permission.Options{})
	for _, n := range []string{CallToolName, SearchToolName, ToolName("fs", "read"), tools.MCPGrant("fs", "read"), "write_file"} {
		perms.RestoreGrant(permission.SessionGrant{Kind: permission.GrantTool, Name: n})
	}
	require.Equal(t, []string{"mcp:fs/read", "write_file"}, perms.SessionTools())
	require.True(t, perms.Evaluate(CallToolName, nil, mcpMeta).NeedsUser)
}

func TestMCPGrantIsInjective(t *testing.T) {
	// Names that sanitize, or join, alike have different grant keys.
	pairs := [][2][2]string{
		{{"a.b", "c"}, {"a_b", "c"}},
		{{"a", "b__c"}, {"a__b", "c"}},
		{{"a/b", "c"}, {"a", "b/c"}},
		{{"a%2Fb", "c"}, {"a/b", "c"}},
	}
	for _, p := range pairs {
		require.NotEqual(t, tools.MCPGrant(p[0][0], p[0][1]), tools.MCPGrant(p[1][0], p[1][1]), "%v", p)
	}
	require.Equal(t, "mcp:fs/read_file", tools.MCPGrant("fs", "read_file"))
}
