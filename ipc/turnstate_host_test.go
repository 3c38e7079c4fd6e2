package ipc

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestTurnStateAgrees: session.get, session.list, subscribe's running and
// the stored status move together through a turn: queued/running while the
// model streams, awaiting while it asks, running after the answer, idle at
// the end.
func TestTurnStateAgrees(t *testing.T) {
	b, _ := json.Marshal(map[string]string{"command": "echo hi"})
	p := scripted.New(
		scripted.Response{Text: "one", Gate: "stream", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell", Arguments: string(b)}}},
		scripted.Response{Text: "done", Gate: "end"},
	)
	ts := startServer(t, withProvider(p))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	check := func(want backend.TurnState) {
		t.Helper()
		require.NoError(t, ts.st.Flush(tctx(t)))
		var g struct {
			Session protocol.Session `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &g))
		require.Equal(t, string(want), g.Session.Status)
		require.Equal(t, want.Busy(), g.Session.Running)
		var l struct {
			Sessions []protocol.Session `json:"sessions"`
		}
		require.NoError(t, c.Call(tctx(t), "session.list", map[string]string{"projectId": g.Session.ProjectID}, &l))
		require.Len(t, l.Sessions, 1)
		require.Equal(t, string(want), l.Sessions[0].Status)
		ss, err := ts.st.Session(tctx(t), sid)
		require.NoError(t, err)
		require.Equal(t, string(want), ss.Status, "stored")
		c2 := ts.dial(t)
		sub, err := c2.Subscribe(tctx(t), sid, 1<<40)
		require.NoError(t, err)
		require.Equal(t, want.Busy(), sub.Running)
		require.NoError(t, c2.Close())
	}
	check(backend.StateIdle)
	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	<-p.Gate("stream").Reached()
	nextOfType(t, c, sid, "assistant_delta")
	check(backend.StateRunning)
	p.Gate("stream").Release()
	perm := nextOfType(t, c, sid, "permission_required")
	check(backend.StateAwaiting)
	var d struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(perm.Data, &d))
	require.NoError(t, c.Respond(tctx(t), sid, d.RequestID, map[string]string{"outcome": "once"}))
	<-p.Gate("end").Reached()
	check(backend.StateRunning)
	p.Gate("end").Release()
	nextOfType(t, c, sid, "turn_end")
	h, err := ts.srv.b.Session(tctx(t), sid)
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(tctx(t)))
	check(backend.StateIdle)
}
