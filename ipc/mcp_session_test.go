package ipc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// Session servers (mcp.sessionAdd): untrusted until mcp.sessionTrust with
// the hash shown; remembered approvals start the same config in a later
// session of the project; the servers live as long as the connection that
// added them; names of the project's servers, builtin presets and stale
// hashes are refused; nothing of the config but its hash is stored.
func TestMCPSessionServers(t *testing.T) {
	bin := buildMCPServer(t)
	ts := startServer(t)
	c := ts.dial(t)
	pid, _ := ts.openProjectDir(t, c, "proj")
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	ed := map[string]any{"name": "ed", "command": []string{bin}, "env": map[string]string{"ED_TOKEN": "value-never-stored"}}
	add := func(c *client.Client, sid string, servers ...any) (protocol.MCPSessionAddResult, error) {
		var res protocol.MCPSessionAddResult
		err := c.Call(tctx(t), "mcp.sessionAdd", map[string]any{"sessionId": sid, "servers": servers}, &res)
		return res, err
	}
	trust := func(c *client.Client, sid, hash string, remember bool) (protocol.MCPServerResult, error) {
		var res protocol.MCPServerResult
		err := c.Call(tctx(t), "mcp.sessionTrust", map[string]any{"sessionId": sid, "name": "ed", "hash": hash, "remember": remember}, &res)
		return res, err
	}

	// Refusals.
	require.NoError(t, c.Call(tctx(t), "mcp.add", map[string]any{"projectId": pid, "config": map[string]any{"name": "proj", "command": bin, "enabled": false}}, nil))
	for _, bad := range []any{
		map[string]any{"name": "proj", "command": []string{bin}},
		map[string]any{"name": "ocr", "type": "builtin"},
		map[string]any{"name": "nocmd"},
	} {
		_, err = add(c, sid, bad)
		require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v: %v", bad, err)
	}
	_, err = add(c, sid, ed, ed)
	require.Equal(t, client.CodeInvalidParams, client.Code(err), "a name twice: %v", err)

	// Untrusted until trusted with the hash shown.
	res, err := add(c, sid, ed)
	require.NoError(t, err)
	require.Len(t, res.Servers, 1)
	got := res.Servers[0]
	require.Equal(t, "untrusted", got.State)
	require.NotEmpty(t, got.Hash)
	require.Empty(t, got.ToolNames)
	_, err = trust(c, sid, "sha256:stale", false)
	require.Equal(t, client.CodeConflict, client.Code(err), "%v", err)
	tr, err := trust(c, sid, got.Hash, true)
	require.NoError(t, err)
	require.Equal(t, "connected", tr.Server.State, tr.Server.LastError)
	require.Contains(t, tr.Server.ToolNames, "mcp__ed__echo")
	_, listed := serverNamed(mcpList(t, c, pid), "ed")
	require.False(t, listed, "a session server is not the project's")

	// Remembered for the project: another session, another connection,
	// starts it without asking; the first connection's servers end with it.
	c2 := ts.dial(t)
	sid2, err := c2.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	res2, err := add(c2, sid2, ed)
	require.NoError(t, err)
	require.Equal(t, "connected", res2.Servers[0].State, res2.Servers[0].LastError)
	c.Close()
	require.Eventually(t, func() bool {
		_, err := trust(c2, sid, got.Hash, false)
		return client.Code(err) == client.CodeNotFound
	}, 10*time.Second, 10*time.Millisecond, "the servers of a closed connection are gone")

	raw, err := ts.st.Setting(tctx(t), "mcp.sessionTrust/"+pid)
	require.NoError(t, err)
	require.Contains(t, string(raw), got.Hash)
	require.NotContains(t, string(raw), "value-never-stored")
}
