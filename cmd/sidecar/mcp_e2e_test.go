package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// TestE2EMCPServerToolWithApprovalAndShutdown drives the real binary: a
// stdio MCP server added with mcp.add is saved to .agent/mcp.json, its tool
// is called by a scripted turn after an approval, and shutdown leaves no
// MCP process behind.
func TestE2EMCPServerToolWithApprovalAndShutdown(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the MCP server's process in /proc")
	}
	bin := filepath.Join(t.TempDir(), "mcpserver-e2e")
	out, err := exec.Command("go", "build", "-o", bin, "../../mcp/testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, "build the test MCP server: %s", out)

	script := writeScript(t,
		calls("", toolCall("m1", "mcp__e2e__echo", map[string]any{"text": "through the sidecar"})),
		text("echoed"),
	)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+script)
	c := p.connect(t)
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)

	require.NoError(t, c.Call(tctx(t), "mcp.add", map[string]any{
		"projectId": pid,
		"config":    map[string]any{"name": "e2e", "command": bin},
	}, nil))
	saved, err := os.ReadFile(filepath.Join(projDir, ".agent", "mcp.json"))
	require.NoError(t, err)
	require.Contains(t, string(saved), `"e2e"`)
	waitConnected(t, c, pid, "e2e")
	require.Len(t, processesWith(t, bin), 1)

	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "echo it")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "permission_required")
	perm := dataOf(t, evs[len(evs)-1])
	require.Equal(t, "mcp__e2e__echo", perm["name"])
	require.Equal(t, "mcp", perm["category"])
	require.NoError(t, c.Respond(tctx(t), sid, perm["requestId"].(string), map[string]string{"outcome": "once"}))
	evs = untilType(t, c, sid, "turn_end")
	fin := ofType(evs, "tool_finished")
	require.Len(t, fin, 1)
	require.Equal(t, "ok", dataOf(t, fin[0])["status"])
	require.Contains(t, dataOf(t, fin[0])["result_preview"], "echo: through the sidecar")
	require.Equal(t, "echoed", deltaText(t, evs))

	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)
	require.Empty(t, processesWith(t, bin), "no MCP server left after shutdown")
}

// waitConnected polls mcp.list until the server is connected.
func waitConnected(t *testing.T, c *client.Client, projectID, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res struct {
			Servers []struct {
				Name, State, LastError string
				ToolNames              []string `json:"toolNames"`
			} `json:"servers"`
		}
		require.NoError(t, c.Call(tctx(t), "mcp.list", map[string]string{"projectId": projectID}, &res))
		for _, s := range res.Servers {
			if s.Name == name && s.State == "connected" {
				require.Contains(t, s.ToolNames, "mcp__"+name+"__echo")
				return
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(res)
			t.Fatalf("%s never connected: %s", name, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
