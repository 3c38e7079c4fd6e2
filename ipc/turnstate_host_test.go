package ipc

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
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
	check := func(want TurnState) {
		t.Helper()
		require.NoError(t, ts.st.Flush(tctx(t)))
		var g struct {
			Session SessionInfo `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &g))
		require.Equal(t, string(want), g.Session.Status)
		require.Equal(t, want.Busy(), g.Session.Running)
		var l struct {
			Sessions []SessionInfo `json:"sessions"`
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
	check(StateIdle)
	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	<-p.Gate("stream").Reached()
	nextOfType(t, c, sid, "assistant_delta")
	check(StateRunning)
	p.Gate("stream").Release()
	perm := nextOfType(t, c, sid, "permission_required")
	check(StateAwaiting)
	var d struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(perm.Data, &d))
	require.NoError(t, c.Respond(tctx(t), sid, d.RequestID, map[string]string{"outcome": "once"}))
	<-p.Gate("end").Reached()
	check(StateRunning)
	p.Gate("end").Release()
	nextOfType(t, c, sid, "turn_end")
	ts.host(t, sid).waitIdleT(t)
	check(StateIdle)
}

// TestIllegalTransitionLogged: a move the machine does not have is logged
// and refused; the state is unchanged.
func TestIllegalTransitionLogged(t *testing.T) {
	var buf lockedBuffer
	ts := startServer(t, func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&buf, nil)) })
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	h := ts.host(t, sid)
	h.mu.Lock()
	err := h.transitionLocked(StateAwaiting)
	st := h.state
	h.mu.Unlock()
	require.ErrorIs(t, err, ErrIllegalTransition)
	require.Equal(t, StateIdle, st)
	require.Contains(t, buf.String(), "illegal turn state transition: idle → awaiting")
}

func (ts *testServer) host(t *testing.T, sid string) *sessionHost {
	t.Helper()
	h, err := ts.srv.host(tctx(t), sid)
	require.NoError(t, err)
	return h
}

func (h *sessionHost) waitIdleT(t *testing.T) {
	t.Helper()
	require.NoError(t, h.waitIdle(tctx(t)))
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
