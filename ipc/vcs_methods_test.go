package ipc

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/vcs"
)

func writeCall(id, path, content string) scripted.Response {
	b, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return scripted.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: "write_file", Arguments: string(b)}}}
}

func TestVCSTurnsDiffRestore(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		writeCall("w1", "a.txt", "one\n"), scripted.Response{Text: "wrote one"},
		scripted.Response{Text: "changed nothing"},
		writeCall("w2", "a.txt", "two\n"), scripted.Response{Text: "wrote two"},
	)))
	c := ts.dial(t)
	pid := ts.project(t, c)
	proj := filepath.Join(ts.dir, "proj")
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	for _, in := range []string{"write one", "nothing", "write two"} {
		_, err := c.StartTurn(tctx(t), sid, in)
		require.NoError(t, err)
		collectTurn(t, c, sid)
	}
	var info protocol.Session
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]any{"sessionId": sid}, &struct {
		Session *protocol.Session `json:"session"`
	}{&info}))
	require.Equal(t, "auto", info.VCS)

	var turns protocol.VCSTurnsResult
	require.NoError(t, c.Call(tctx(t), "vcs.turns", map[string]any{"sessionId": sid}, &turns))
	require.Equal(t, "shadow", turns.Plan.Mode, "a folder that is no git work tree gets a shadow repository")
	require.Len(t, turns.Turns, 2, "the turn that changed nothing has no number")
	require.Equal(t, 1, turns.Turns[0].Number)
	require.Equal(t, []protocol.FileChange{{Path: "a.txt", Status: "A"}}, turns.Turns[0].Files)
	require.Equal(t, []protocol.FileChange{{Path: "a.txt", Status: "M"}}, turns.Turns[1].Files)

	var diff struct {
		Diff string `json:"diff"`
	}
	require.NoError(t, c.Call(tctx(t), "vcs.diff", map[string]any{"sessionId": sid, "turn": 2}, &diff))
	require.Contains(t, diff.Diff, "-one")
	require.Contains(t, diff.Diff, "+two")
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "vcs.diff", map[string]any{"sessionId": sid, "turn": 9}).Code)
	require.Equal(t, wsrpc.CodeInvalidParams, callErr(t, c, "vcs.diff", map[string]any{"sessionId": sid, "turn": -1}).Code)
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "vcs.turns", map[string]any{"sessionId": "nope"}).Code)

	var res vcs.RestoreResult
	require.NoError(t, c.Call(tctx(t), "vcs.restore", map[string]any{"sessionId": sid, "turn": 1, "dryRun": true}, &res))
	require.True(t, res.DryRun)
	require.Equal(t, []string{"a.txt"}, res.Overwritten)
	b, err := os.ReadFile(filepath.Join(proj, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "two\n", string(b), "a dry run changes nothing")
	require.Equal(t, wsrpc.CodeForbidden, callErr(t, c, "vcs.restore", map[string]any{"sessionId": sid, "turn": 1, "paths": []string{"../outside.txt"}}).Code)
	require.NoError(t, c.Call(tctx(t), "vcs.restore", map[string]any{"sessionId": sid, "turn": 1}, &res))
	require.Equal(t, []string{"a.txt"}, res.Restored)
	b, err = os.ReadFile(filepath.Join(proj, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "one\n", string(b))
}

func TestVCSOff(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(writeCall("w1", "b.txt", "x\n"), scripted.Response{Text: "ok"})))
	c := ts.dial(t)
	pid := ts.project(t, c)
	require.Equal(t, wsrpc.CodeInvalidParams, callErr(t, c, "session.create", map[string]any{"projectId": pid, "vcs": "svn"}).Code)
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto", "vcs": "off"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "write")
	require.NoError(t, err)
	collectTurn(t, c, sid)
	var turns protocol.VCSTurnsResult
	require.NoError(t, c.Call(tctx(t), "vcs.turns", map[string]any{"sessionId": sid}, &turns))
	require.Empty(t, turns.Turns)
	require.Equal(t, "off", turns.Plan.Mode)
	require.Equal(t, wsrpc.CodeConfig, callErr(t, c, "vcs.diff", map[string]any{"sessionId": sid, "turn": 1}).Code)
	require.NoDirExists(t, filepath.Join(ts.dir, "proj", ".agent", "vcs"))
}

// TestCompactionStateRestoredOnLoad: a saved compaction state is loaded into
// the engine built for the session and saved again after its next turn.
func TestCompactionStateRestoredOnLoad(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: "ok"})))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	require.NoError(t, ts.st.SaveCompaction(tctx(t), sid, json.RawMessage(`{"compactions":7,"summaries":3,"lastMethod":"summary"}`)))
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hi")
	require.NoError(t, err)
	collectTurn(t, c, sid)
	state, err := ts.st.Compaction(tctx(t), sid)
	require.NoError(t, err)
	var cs struct {
		Compactions int    `json:"compactions"`
		Summaries   int    `json:"summaries"`
		LastMethod  string `json:"lastMethod"`
		LastTokens  int    `json:"lastTokens"`
	}
	require.NoError(t, json.Unmarshal(state, &cs))
	require.Equal(t, 7, cs.Compactions)
	require.Equal(t, 3, cs.Summaries)
	require.Equal(t, "summary", cs.LastMethod)
}

func TestSessionDeleteForgetsSnapshots(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(writeCall("w1", "c.txt", "c\n"), scripted.Response{Text: "ok"})))
	c := ts.dial(t)
	pid := ts.project(t, c)
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto", "vcs": "shadow"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "write")
	require.NoError(t, err)
	collectTurn(t, c, sid)
	out, err := exec.Command("git", "--git-dir", shadowGitDir(t, ts), "for-each-ref", vcs.AgentRef(sid)).Output()
	require.NoError(t, err)
	require.Contains(t, string(out), vcs.AgentRef(sid), "the turn was recorded")
	require.NoError(t, c.Call(tctx(t), "session.delete", map[string]any{"sessionId": sid}, nil))
	out, err = exec.Command("git", "--git-dir", shadowGitDir(t, ts), "for-each-ref", vcs.AgentRef(sid)).Output()
	require.NoError(t, err)
	require.Empty(t, string(out), "session.delete forgets the session's refs")
	require.FileExists(t, filepath.Join(ts.dir, "proj", "c.txt"), "the workspace is untouched")
}

// shadowGitDir is the shadow repository of the test server's project.
func shadowGitDir(t *testing.T, ts *testServer) string {
	t.Helper()
	proj, err := filepath.EvalSymlinks(filepath.Join(ts.dir, "proj"))
	require.NoError(t, err)
	return vcs.ShadowGitDir(filepath.Join(ts.srv.opts.DataDir, "vcs"), proj)
}
