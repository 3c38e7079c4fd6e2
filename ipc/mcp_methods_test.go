package ipc

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
)

// buildMCPServer builds the mcp package's stdio test server into the
// test's temp dir.
func buildMCPServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	out, err := exec.Command("go", "build", "-o", bin, "../mcp/testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, "build the test MCP server: %s", out)
	return bin
}

// openProjectDir makes a project folder named name and opens it.
func (ts *testServer) openProjectDir(t *testing.T, c *client.Client, name string) (id, dir string) {
	t.Helper()
	dir = filepath.Join(ts.dir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	id, err := c.OpenProject(tctx(t), dir)
	require.NoError(t, err)
	return id, dir
}

func mcpList(t *testing.T, c *client.Client, projectID string) protocol.MCPListResult {
	t.Helper()
	var res protocol.MCPListResult
	require.NoError(t, c.Call(tctx(t), "mcp.list", map[string]string{"projectId": projectID}, &res))
	return res
}

func serverNamed(res protocol.MCPListResult, name string) (protocol.MCPServer, bool) {
	for _, s := range res.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return protocol.MCPServer{}, false
}

// waitState polls mcp.list until the server reaches state.
func waitState(t *testing.T, c *client.Client, projectID, name, state string) protocol.MCPServer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, ok := serverNamed(mcpList(t, c, projectID), name)
		if ok && s.State == state {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("server %s never reached %s (last: %+v)", name, state, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitNote reads notifications until one of method matches.
func waitNote[T any](t *testing.T, c *client.Client, method string, match func(T) bool) T {
	t.Helper()
	ctx := tctx(t)
	for {
		select {
		case n, ok := <-c.Notifications():
			require.True(t, ok, "connection closed while waiting for %s", method)
			if n.Method != method {
				continue
			}
			var v T
			require.NoError(t, json.Unmarshal(n.Params, &v))
			if match(v) {
				return v
			}
		case <-ctx.Done():
			t.Fatalf("no matching %s notification", method)
		}
	}
}

func statusIs(projectID, name, state string) func(protocol.MCPStatusNotification) bool {
	return func(s protocol.MCPStatusNotification) bool {
		return s.ProjectID == projectID && s.Name == name && s.State == state
	}
}

// addServer adds the test server under name and waits until it connected.
func addServer(t *testing.T, c *client.Client, projectID, name, bin string) {
	t.Helper()
	var res protocol.MCPServerResult
	require.NoError(t, c.Call(tctx(t), "mcp.add", map[string]any{
		"projectId": projectID,
		"config":    map[string]any{"name": name, "command": []string{bin}},
	}, &res))
	require.Equal(t, name, res.Server.Name)
	require.Equal(t, "stdio", res.Server.Type)
	waitState(t, c, projectID, name, "connected")
}

// mcpPIDs lists the live processes running bin (Linux: /proc).
func mcpPIDs(t *testing.T, bin string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(cmd), bin+"\x00") {
			continue
		}
		if pidAliveProc(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// pidAliveProc reports whether pid runs and is not a zombie.
func pidAliveProc(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func requireLinuxProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the MCP server's processes")
	}
}

// waitNoProcess waits until no process runs bin.
func waitNoProcess(t *testing.T, bin string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(mcpPIDs(t, bin)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("MCP server processes still running: %v", mcpPIDs(t, bin))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMCPAddPersistsListsAndCallsWithApproval(t *testing.T) {
	bin := buildMCPServer(t)
	prov := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "m1", Name: "mcp__tsrv__echo", Arguments: `{"text":"hello mcp"}`}}},
		scripted.Response{Text: "done"},
	)
	ts := startServer(t, withProvider(prov))
	c := ts.dial(t)
	pid, dir := ts.openProjectDir(t, c, "proj")
	addServer(t, c, pid, "tsrv", bin)

	// The file was written, in the file's format.
	data, err := os.ReadFile(filepath.Join(dir, ".agent", "mcp.json"))
	require.NoError(t, err)
	require.Contains(t, string(data), `"tsrv"`)
	require.Contains(t, string(data), bin)
	require.NotContains(t, string(data), `"ocr"`, "the builtin preset is not written")

	res := mcpList(t, c, pid)
	srv, ok := serverNamed(res, "tsrv")
	require.True(t, ok)
	require.Equal(t, "connected", srv.State)
	require.Positive(t, srv.Tools)
	require.Contains(t, srv.ToolNames, "mcp__tsrv__echo")
	require.Empty(t, srv.LastError)
	require.Equal(t, filepath.Join(dir, ".agent", "mcp.json"), res.ConfigPath)
	require.True(t, slices.ContainsFunc(res.Configs, func(c protocol.MCPServerConfig) bool {
		var entry struct{ Name string }
		return json.Unmarshal(c, &entry) == nil && entry.Name == "tsrv"
	}))

	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "echo something")
	require.NoError(t, err)
	perm := nextOfType(t, c, sid, "permission_required")
	var pd struct {
		RequestID string `json:"requestId"`
		Name      string `json:"name"`
		Category  string `json:"category"`
	}
	require.NoError(t, json.Unmarshal(perm.Data, &pd))
	require.Equal(t, "mcp__tsrv__echo", pd.Name)
	require.Equal(t, "mcp", pd.Category)
	require.NoError(t, c.Respond(tctx(t), sid, pd.RequestID, map[string]string{"outcome": "once"}))
	evs := collectTurn(t, c, sid)
	var finished bool
	for _, ev := range evs {
		if ev.Type != "tool_finished" {
			continue
		}
		var d struct {
			Name, Status  string
			ResultPreview string `json:"result_preview"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		require.Equal(t, "mcp__tsrv__echo", d.Name)
		require.Equal(t, "ok", d.Status)
		finished = true
	}
	require.True(t, finished)
	require.Equal(t, "done", textOf(evs))
	// The model got the tool's result.
	reqs := prov.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, llm.RoleTool, last.Role)
	require.Contains(t, last.Content, "echo: hello mcp")
}

func TestMCPProjectsNeverShareTools(t *testing.T) {
	bin := buildMCPServer(t)
	prov := scripted.New(scripted.Response{Text: "a"}, scripted.Response{Text: "b"})
	ts := startServer(t, withProvider(prov))
	c := ts.dial(t)
	pa, _ := ts.openProjectDir(t, c, "a")
	pb, _ := ts.openProjectDir(t, c, "b")
	addServer(t, c, pa, "onlya", bin)
	_, ok := serverNamed(mcpList(t, c, pb), "onlya")
	require.False(t, ok, "project b lists a server of project a")

	toolsOfTurn := func(projectID string) []string {
		sid, err := c.CreateSession(tctx(t), projectID, nil)
		require.NoError(t, err)
		_, err = c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		_, err = c.StartTurn(tctx(t), sid, "hi")
		require.NoError(t, err)
		collectTurn(t, c, sid)
		reqs := prov.Requests()
		var names []string
		for _, ts := range reqs[len(reqs)-1].Tools {
			names = append(names, ts.Function.Name)
		}
		return names
	}
	require.Contains(t, toolsOfTurn(pa), "mcp__onlya__echo")
	bTools := toolsOfTurn(pb)
	require.NotEmpty(t, bTools)
	for _, n := range bTools {
		require.False(t, strings.HasPrefix(n, "mcp__onlya__"), "project b's session has %s", n)
	}
}

func TestMCPHandEditNotifiesAndReconnects(t *testing.T) {
	bin := buildMCPServer(t)
	ts := startServer(t)
	c := ts.dial(t)
	pid, dir := ts.openProjectDir(t, c, "proj")
	other := ts.dial(t) // every initialized connection is told
	path := filepath.Join(dir, ".agent", "mcp.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	file, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"hand": map[string]any{"command": bin}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, file, 0o644))

	for _, cl := range []*client.Client{c, other} {
		// The reload finds a server of the file: it waits for trust, then
		// the change is reported.
		waitNote(t, cl, "mcp.status", statusIs(pid, "hand", "untrusted"))
		ch := waitNote(t, cl, "mcp.changed", func(m protocol.MCPChanged) bool { return m.ProjectID == pid })
		require.Equal(t, "file", ch.Source)
		require.Equal(t, []string{"hand"}, ch.Added)
		require.Empty(t, ch.Removed)
		require.Empty(t, ch.Warnings)
	}
	hand := waitState(t, c, pid, "hand", "untrusted")
	require.NoError(t, c.Call(tctx(t), "mcp.trust", map[string]string{"projectId": pid, "name": "hand", "hash": hand.Hash}, nil))
	require.Contains(t, waitState(t, c, pid, "hand", "connected").ToolNames, "mcp__hand__echo")

	// A bad entry: the change names it in a warning, the good server stays.
	file, err = json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hand":   map[string]any{"command": bin},
		"broken": map[string]any{"command": 42},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, file, 0o644))
	ch := waitNote(t, c, "mcp.changed", func(m protocol.MCPChanged) bool { return m.ProjectID == pid })
	require.NotEmpty(t, ch.Warnings)
	require.Equal(t, "broken", ch.Warnings[0].Server)
	res := mcpList(t, c, pid)
	require.NotEmpty(t, res.Warnings)
	srv, ok := serverNamed(res, "hand")
	require.True(t, ok)
	require.Equal(t, "connected", srv.State)

	// Removing it by hand disconnects it.
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers":{}}`), 0o644))
	ch = waitNote(t, c, "mcp.changed", func(m protocol.MCPChanged) bool { return m.ProjectID == pid && len(m.Removed) > 0 })
	require.Equal(t, []string{"hand"}, ch.Removed)
	_, ok = serverNamed(mcpList(t, c, pid), "hand")
	require.False(t, ok)
}

func TestMCPProjectCloseAndShutdownLeaveNoChild(t *testing.T) {
	requireLinuxProc(t)
	bin := buildMCPServer(t)
	ts := startServer(t)
	c := ts.dial(t)
	pid, _ := ts.openProjectDir(t, c, "proj")
	addServer(t, c, pid, "tsrv", bin)
	require.Len(t, mcpPIDs(t, bin), 1)
	require.NoError(t, c.Call(tctx(t), "project.close", map[string]string{"projectId": pid}, nil))
	waitNoProcess(t, bin)
	require.Equal(t, client.CodeNotFound, callErr(t, c, "mcp.list", map[string]string{"projectId": pid}).Code)

	// Reopening connects the saved server again; closing the server kills it.
	pid2, _ := ts.openProjectDir(t, c, "proj")
	require.Equal(t, pid, pid2)
	waitState(t, c, pid, "tsrv", "connected")
	require.Len(t, mcpPIDs(t, bin), 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, ts.srv.Close(ctx))
	waitNoProcess(t, bin)
}

func TestMCPRefreshBringsBackAKilledServer(t *testing.T) {
	requireLinuxProc(t)
	bin := buildMCPServer(t)
	ts := startServer(t)
	c := ts.dial(t)
	pid, _ := ts.openProjectDir(t, c, "proj")
	addServer(t, c, pid, "tsrv", bin)
	pids := mcpPIDs(t, bin)
	require.Len(t, pids, 1)
	p, err := os.FindProcess(pids[0])
	require.NoError(t, err)
	require.NoError(t, p.Kill())

	failed := waitNote(t, c, "mcp.status", statusIs(pid, "tsrv", "failed"))
	require.NotEmpty(t, failed.LastError)
	require.Equal(t, "failed", waitState(t, c, pid, "tsrv", "failed").State)

	var res protocol.MCPServerResult
	require.NoError(t, c.Call(tctx(t), "mcp.refresh", map[string]string{"projectId": pid, "name": "tsrv"}, &res))
	require.Equal(t, "connected", res.Server.State)
	require.Contains(t, res.Server.ToolNames, "mcp__tsrv__echo")
	waitNote(t, c, "mcp.status", statusIs(pid, "tsrv", "connected"))
	// A connection superseded on the way is closed, but its process may
	// take a moment to die: one server is left, and it is a new one.
	var now []int
	require.Eventually(t, func() bool { now = mcpPIDs(t, bin); return len(now) == 1 }, time.Minute, 20*time.Millisecond, "one server process left")
	require.NotEqual(t, pids[0], now[0])
}

func TestMCPUpdateAndRemovePersist(t *testing.T) {
	bin := buildMCPServer(t)
	ts := startServer(t)
	c := ts.dial(t)
	pid, dir := ts.openProjectDir(t, c, "proj")
	addServer(t, c, pid, "tsrv", bin)
	path := filepath.Join(dir, ".agent", "mcp.json")

	var res protocol.MCPServerResult
	require.NoError(t, c.Call(tctx(t), "mcp.update", map[string]any{
		"projectId": pid, "name": "tsrv",
		"config": map[string]any{"name": "tsrv", "command": []string{bin}, "enabled": false},
	}, &res))
	require.Equal(t, "disabled", res.Server.State)
	require.Empty(t, res.Server.ToolNames)
	cfgs, _, err := mcp.LoadConfigFile(path)
	require.NoError(t, err)
	require.Len(t, cfgs, 1)
	require.False(t, cfgs[0].Enabled)
	require.Equal(t, client.CodeConflict, callErr(t, c, "mcp.refresh", map[string]string{"projectId": pid, "name": "tsrv"}).Code)

	// Enabled again, under a new name: it reconnects.
	require.NoError(t, c.Call(tctx(t), "mcp.update", map[string]any{
		"projectId": pid, "name": "tsrv",
		"config": map[string]any{"name": "renamed", "command": []string{bin}},
	}, &res))
	require.Equal(t, "renamed", res.Server.Name)
	waitState(t, c, pid, "renamed", "connected")
	cfgs, _, err = mcp.LoadConfigFile(path)
	require.NoError(t, err)
	require.Len(t, cfgs, 1)
	require.Equal(t, "renamed", cfgs[0].Name)
	require.True(t, cfgs[0].Enabled)

	require.NoError(t, c.Call(tctx(t), "mcp.remove", map[string]string{"projectId": pid, "name": "renamed"}, nil))
	cfgs, _, err = mcp.LoadConfigFile(path)
	require.NoError(t, err)
	require.Empty(t, cfgs)
	_, ok := serverNamed(mcpList(t, c, pid), "renamed")
	require.False(t, ok)
}

func TestMCPMethodErrors(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	pid, _ := ts.openProjectDir(t, c, "proj")
	closedDir := filepath.Join(ts.dir, "closed")
	require.NoError(t, os.MkdirAll(closedDir, 0o755))
	closedID, err := c.OpenProject(tctx(t), closedDir)
	require.NoError(t, err)
	require.NoError(t, c.Call(tctx(t), "project.close", map[string]string{"projectId": closedID}, nil))
	good := map[string]any{"name": "s1", "command": "definitely-not-a-command-zq"}

	cases := []struct {
		name, method string
		params       any
		code         int
		msg          string
	}{
		{"unknown project", "mcp.list", map[string]string{"projectId": "nope"}, client.CodeNotFound, "nope"},
		{"closed project", "mcp.list", map[string]string{"projectId": closedID}, client.CodeNotFound, "not open"},
		{"no project id", "mcp.list", map[string]string{}, client.CodeInvalidParams, "projectId"},
		{"add to unknown project", "mcp.add", map[string]any{"projectId": "nope", "config": good}, client.CodeNotFound, "nope"},
		{"add without config", "mcp.add", map[string]any{"projectId": pid}, client.CodeInvalidParams, "config"},
		{"add config not an object", "mcp.add", map[string]any{"projectId": pid, "config": "x"}, client.CodeInvalidParams, "config"},
		{"add without name", "mcp.add", map[string]any{"projectId": pid, "config": map[string]any{"command": "x"}}, client.CodeInvalidParams, "name"},
		{"add without command or url", "mcp.add", map[string]any{"projectId": pid, "config": map[string]any{"name": "x"}}, client.CodeInvalidParams, "config"},
		{"add bad command line", "mcp.add", map[string]any{"projectId": pid, "config": map[string]any{"name": "x", "command": "a 'unterminated"}}, client.CodeInvalidParams, "config"},
		{"update unknown server", "mcp.update", map[string]any{"projectId": pid, "name": "ghost", "config": good}, client.CodeNotFound, "ghost"},
		{"remove unknown server", "mcp.remove", map[string]string{"projectId": pid, "name": "ghost"}, client.CodeNotFound, "ghost"},
		{"refresh unknown server", "mcp.refresh", map[string]string{"projectId": pid, "name": "ghost"}, client.CodeNotFound, "ghost"},
		{"remove builtin", "mcp.remove", map[string]string{"projectId": pid, "name": "ocr"}, client.CodeConflict, "builtin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := callErr(t, c, tc.method, tc.params)
			require.Equal(t, tc.code, e.Code, e.Message)
			require.Contains(t, e.Message, tc.msg)
		})
	}

	// A duplicate name is a conflict; the first add stays in the file once.
	require.NoError(t, c.Call(tctx(t), "mcp.add", map[string]any{"projectId": pid, "config": good}, nil))
	e := callErr(t, c, "mcp.add", map[string]any{"projectId": pid, "config": good})
	require.Equal(t, client.CodeConflict, e.Code, e.Message)
	require.Equal(t, protocol.KindExists, e.KindOf(), "error.data.kind")
	// The command does not exist: the server fails, with a reason, and the
	// failure is announced.
	st := waitNote(t, c, "mcp.status", statusIs(pid, "s1", "failed"))
	require.NotEmpty(t, st.LastError)
}

// BenchmarkMCPList measures an mcp.list round trip (the builtin OCR preset
// only).
func BenchmarkMCPList(b *testing.B) {
	ts := startServer(b)
	c := ts.dial(b)
	pid := ts.project(b, c)
	ctx := context.Background()
	var res protocol.MCPListResult
	for b.Loop() {
		if err := c.Call(ctx, "mcp.list", map[string]string{"projectId": pid}, &res); err != nil {
			b.Fatal(err)
		}
	}
}
