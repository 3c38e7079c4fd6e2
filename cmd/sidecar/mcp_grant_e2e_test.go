package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/store"
)

// lazyServer builds the test MCP server, with 31 tools (lazy mode) of which
// write_mark creates a file in the returned folder.
func lazyServer(t *testing.T) (bin, marks string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the test MCP server runs over stdio on Unix here")
	}
	bin = filepath.Join(t.TempDir(), "mcpserver-grant")
	out, err := exec.Command("go", "build", "-o", bin, "../../mcp/testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, "build the test MCP server: %s", out)
	return bin, t.TempDir()
}

// addLazyServer adds the server as "e2e" (mcp.add trusts it) and waits
// until it is connected in lazy mode.
func addLazyServer(t *testing.T, c *client.Client, projectID, bin, marks string) {
	t.Helper()
	require.NoError(t, c.Call(tctx(t), "mcp.add", map[string]any{
		"projectId": projectID,
		"config":    map[string]any{"name": "e2e", "command": bin, "args": []string{"-extra-tools", "20", "-mark-dir", marks}},
	}, nil))
	waitLazy(t, c, projectID, "e2e")
}

// nextCard reads events until a permission_required (returned) and fails
// if the turn ends first or a tool call starts meanwhile.
func nextCard(t *testing.T, c *client.Client, sid string) map[string]any {
	t.Helper()
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		switch ev.Type {
		case "permission_required":
			return dataOf(t, ev)
		case "turn_end", "tool_started":
			t.Fatalf("%s before the expected permission_required: %s", ev.Type, ev.Data)
		}
	}
}

// TestE2ELazyMCPGrantIsPerTool (issue "what a hostile repository or model
// can still do", item 2) drives the real binary with a real MCP server that
// offers enough tools for lazy mode, so its tools are reached through
// mcp_call_tool. An "always" for the read-only echo, called through the
// generic tool, grants that tool alone: the card names mcp__e2e__echo with
// echo's own arguments, a later call of the side-effecting write_mark
// through the generic tool asks again naming it (and has not run before
// the answer; denied, it never runs), and echo runs unasked both through
// the generic tool and called directly once loaded.
func TestE2ELazyMCPGrantIsPerTool(t *testing.T) {
	bin, marks := lazyServer(t)
	script := writeScript(t,
		calls("", toolCall("c1", "mcp_call_tool", map[string]any{"name": "e2e/echo", "arguments": map[string]any{"text": "read only"}})),
		calls("", toolCall("c2", "mcp_call_tool", map[string]any{"name": "write_mark", "arguments": map[string]any{"name": "pwned"}})),
		calls("", toolCall("c3", "mcp_call_tool", map[string]any{"name": "mcp__e2e__echo", "arguments": map[string]any{"text": "again"}})),
		calls("", toolCall("c4", "mcp_search_tools", map[string]any{"query": "echo"})),
		calls("", toolCall("c5", "mcp__e2e__echo", map[string]any{"text": "direct"})),
		text("done"),
	)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+script, "ZQAGENT_MCP_LAZY=")
	c := p.connect(t)
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	addLazyServer(t, c, pid, bin, marks)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "use the server")
	require.NoError(t, err)

	card := nextCard(t, c, sid)
	require.Equal(t, "c1", card["reqId"])
	require.Equal(t, "mcp__e2e__echo", card["name"])
	require.Equal(t, map[string]any{"text": "read only"}, card["arguments"])
	require.Equal(t, "mcp_call_tool", card["via"])
	require.Equal(t, "mcp:e2e/echo", card["toolGrant"])
	require.Equal(t, "mcp", card["category"])
	require.NoError(t, c.Respond(tctx(t), sid, card["requestId"].(string), map[string]string{"outcome": "always_tool"}))
	untilType(t, c, sid, "tool_finished")

	// A side-effecting tool of the same server, through the same generic
	// tool: asked again, naming it; it has not run (nextCard fails on a
	// tool_started).
	card = nextCard(t, c, sid)
	require.Equal(t, "c2", card["reqId"])
	require.Equal(t, "mcp__e2e__write_mark", card["name"])
	require.Equal(t, map[string]any{"name": "pwned"}, card["arguments"])
	require.Equal(t, "mcp:e2e/write_mark", card["toolGrant"])
	require.NoFileExists(t, filepath.Join(marks, "pwned"))
	require.NoError(t, c.Respond(tctx(t), sid, card["requestId"].(string), map[string]string{"outcome": "deny"}))

	evs := untilType(t, c, sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	require.Empty(t, ofType(evs, "permission_required"), "echo is granted however it is called")
	status := map[string]string{}
	for _, ev := range ofType(evs, "tool_finished") {
		d := dataOf(t, ev)
		status[d["reqId"].(string)] = d["status"].(string)
		if d["reqId"] == "c5" {
			require.Contains(t, d["result_preview"], "echo: direct")
		}
	}
	require.Equal(t, map[string]string{"c2": "denied", "c3": "ok", "c4": "ok", "c5": "ok"}, status)
	require.NoFileExists(t, filepath.Join(marks, "pwned"), "a denied call never runs")

	grants := sessionGrants(t, c, sid)
	require.Len(t, grants, 1)
	require.Equal(t, "tool", grants[0]["kind"])
	require.Equal(t, "mcp:e2e/echo", grants[0]["name"])

	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)
}

// TestE2EOldMCPCallToolGrantGrantsNothing: a session whose store holds a
// grant of "mcp_call_tool" (what an older sidecar stored for an "always"
// given through the generic tool, which covered every MCP tool) has it
// dropped on load: session.grants does not list it, and a call through
// the generic tool asks.
func TestE2EOldMCPCallToolGrantGrantsNothing(t *testing.T) {
	bin, marks := lazyServer(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))

	p := spawn(t, dataDir, "ZQAGENT_MCP_LAZY=")
	c := p.connect(t)
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	addLazyServer(t, c, pid, bin, marks)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)

	st, err := store.Open(tctx(t), dataDir, store.Options{})
	require.NoError(t, err)
	require.NoError(t, st.SaveGrants(tctx(t), sid, store.Grants{
		SessionTools: []string{"mcp_call_tool", "mcp__e2e__write_mark"},
		GrantTimes:   store.GrantTimes{Tools: map[string]time.Time{"mcp_call_tool": time.Now()}, Commands: map[string]time.Time{}},
	}))
	require.NoError(t, st.Close())

	script := writeScript(t,
		calls("", toolCall("c1", "mcp_call_tool", map[string]any{"name": "write_mark", "arguments": map[string]any{"name": "pwned"}})),
		text("done"),
	)
	p = spawn(t, dataDir, "ZQAGENT_SCRIPT="+script, "ZQAGENT_MCP_LAZY=")
	c = p.connect(t)
	_, err = c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	waitLazy(t, c, pid, "e2e")
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "use the server")
	require.NoError(t, err)
	card := nextCard(t, c, sid)
	require.Equal(t, "mcp__e2e__write_mark", card["name"])
	require.NoFileExists(t, filepath.Join(marks, "pwned"))
	require.Empty(t, sessionGrants(t, c, sid), "old-form grants are dropped on load")
	require.NoError(t, c.Respond(tctx(t), sid, card["requestId"].(string), map[string]string{"outcome": "deny"}))
	untilType(t, c, sid, "turn_end")
	require.NoFileExists(t, filepath.Join(marks, "pwned"))

	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)
}

// sessionGrants is session.grants' list.
func sessionGrants(t *testing.T, c *client.Client, sid string) []map[string]any {
	t.Helper()
	var res struct {
		Grants []map[string]any `json:"grants"`
	}
	require.NoError(t, c.Call(tctx(t), "session.grants", map[string]string{"sessionId": sid}, &res))
	return res.Grants
}

// waitLazy polls mcp.list until the server is connected in lazy mode.
func waitLazy(t *testing.T, c *client.Client, projectID, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tctx(t), 30*time.Second)
	defer cancel()
	for {
		var res struct {
			Servers []struct {
				Name, State string
				Lazy        bool `json:"lazy"`
			} `json:"servers"`
		}
		require.NoError(t, c.Call(ctx, "mcp.list", map[string]string{"projectId": projectID}, &res))
		for _, s := range res.Servers {
			if s.Name == name && s.State == "connected" {
				require.True(t, s.Lazy, "the server's tools are reached through mcp_call_tool")
				return
			}
		}
		if ctx.Err() != nil {
			b, _ := json.Marshal(res)
			t.Fatalf("%s never connected: %s", name, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
