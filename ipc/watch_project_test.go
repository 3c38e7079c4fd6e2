package ipc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
)

// Two sessions of one project share the project's file watcher: a write by
// session B to a file session A read makes A's next write a conflict, and
// the watcher is closed with the project.
func TestConflictGuardAcrossSessionsOfAProject(t *testing.T) {
	call := func(name, args string) scripted.Response {
		return scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c_" + name, Name: name, Arguments: args}}}
	}
	p := scripted.New(
		call("read_file", `{"path":"a.txt"}`), scripted.Response{Text: "read"},
		call("write_file", `{"path":"a.txt","content":"from B\n"}`), scripted.Response{Text: "wrote"},
		call("write_file", `{"path":"a.txt","content":"from A\n"}`), scripted.Response{Text: "tried"},
	)
	ts := startServer(t, withProvider(p))
	c := ts.dial(t)
	pid := ts.project(t, c)
	dir := filepath.Join(ts.dir, "proj")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("original\n"), 0o644))
	a, err := c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto", "vcs": "off"})
	require.NoError(t, err)
	b, err := c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto", "vcs": "off"})
	require.NoError(t, err)
	for _, sid := range []string{a, b} {
		_, err := c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
	}
	finished := func(evs []eventLike) map[string]string {
		out := map[string]string{}
		for _, ev := range evs {
			if ev.Type == "tool_finished" {
				var d struct{ Name, Status, Result_preview string }
				_ = json.Unmarshal(ev.Data, &d)
				out[d.Name] = d.Status + ": " + d.Result_preview
			}
		}
		return out
	}
	run := func(sid, text string) map[string]string {
		_, err := c.StartTurn(tctx(t), sid, text)
		require.NoError(t, err)
		var evs []eventLike
		for _, ev := range collectTurn(t, c, sid) {
			evs = append(evs, eventLike{ev.Type, ev.Data})
		}
		return finished(evs)
	}
	require.Contains(t, run(a, "read it")["read_file"], "ok")
	require.Contains(t, run(b, "overwrite it")["write_file"], "ok")
	res := run(a, "write it")["write_file"]
	require.Contains(t, res, "error")
	require.Contains(t, res, "conflict")
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "from B\n", string(got), "A's stale write was refused")

	require.True(t, ts.srv.b.Watching(pid), "the project's sessions share one watcher")
	require.NoError(t, c.Call(tctx(t), "project.close", map[string]any{"projectId": pid}, nil))
	require.False(t, ts.srv.b.Watching(pid), "closed with the project")
}

type eventLike struct {
	Type string
	Data json.RawMessage
}
