package ipc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
)

// TestSessionSandbox drives the sandbox settings over the WebSocket:
// session.create {sandbox: required, shellPolicy: sandbox}, session.get
// reporting the sandbox as it is, a command that needs no approval and
// tries to plant .git/config and .agent/mcp.json (fails, files unchanged;
// with no sandbox here, tools/shell tests the loud refusal), and
// setPermissions {sandboxNetwork}.
func TestSessionSandbox(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no OS sandbox on Windows")
	}
	const plant = `printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> .git/config; echo '{"mcpServers":{"x":{"command":"touch"}}}' > .agent/mcp.json`
	args, _ := json.Marshal(map[string]string{"command": plant})
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell", Arguments: string(args)}}},
		scripted.Response{Text: "done"},
	)))
	c := ts.dial(t)
	proj := filepath.Join(ts.dir, "proj")
	cfg := filepath.Join(proj, ".git", "config")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	require.NoError(t, os.WriteFile(cfg, []byte("[core]\n"), 0o644))
	mcpFile := filepath.Join(proj, ".agent", "mcp.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(mcpFile), 0o755))
	require.NoError(t, os.WriteFile(mcpFile, []byte("{}\n"), 0o644))
	sid := ts.session(t, c, map[string]any{"sandbox": "required", "shellPolicy": "sandbox"})

	here, _ := sandbox.Resolve(sandbox.Config{})
	var got protocol.SessionGetResult
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]any{"sessionId": sid}, &got))
	info := got.Session
	require.Equal(t, "required", info.Settings.Sandbox)
	require.Equal(t, protocol.SandboxInfo{Mode: "required", Backend: here.Kind, Enforced: here.Enforced, Network: !here.Enforced, Reason: info.Sandbox.Reason}, info.Sandbox)

	if here.Enforced {
		plantFails(t, c, sid, cfg, mcpFile)
	} else {
		t.Logf("no sandbox here (%s): tools/shell tests the loud refusal", here.Reason)
	}

	require.NoError(t, c.Call(tctx(t), "session.setPermissions", map[string]any{"sessionId": sid, "sandboxNetwork": true}, &info))
	require.True(t, info.Settings.SandboxNetwork)
	require.True(t, info.Sandbox.Network)
	require.Equal(t, "required", info.Sandbox.Mode, "an unrelated change keeps the mode")
	ce := callErr(t, c, "session.setPermissions", map[string]any{"sessionId": sid, "sandbox": "sometimes"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "sandbox")
}

// plantFails runs the scripted turn whose run_shell plants .git/config.
func plantFails(t *testing.T, c *client.Client, sid, cfg, mcpFile string) {
	t.Helper()
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "plant a git config")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	var finished struct {
		Status  string `json:"status"`
		Preview string `json:"result_preview"`
	}
	for _, ev := range evs {
		if ev.Type == "tool_finished" {
			require.NoError(t, json.Unmarshal(ev.Data, &finished))
		}
	}
	require.Zero(t, countType(evs, "permission_required"), "shellPolicy sandbox with a working sandbox needs no approval")
	require.Regexp(t, `"exit_code":[1-9]`, finished.Preview, "the write must fail inside the sandbox")
	require.NotContains(t, finished.Preview, `"exit_code":0`)
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, "[core]\n", string(b), ".git/config changed")
	b, err = os.ReadFile(mcpFile)
	require.NoError(t, err)
	require.Equal(t, "{}\n", string(b), ".agent/mcp.json changed")
}
