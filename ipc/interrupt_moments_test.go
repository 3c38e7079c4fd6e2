package ipc

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// TestInterruptAtEveryMoment: turn.interrupt lands at each moment of a
// turn's life, held there by a gate (the scripted provider's, the engine
// load's, a slow command, an approval); each interrupted turn gets exactly
// one turn_end, a queued one is dropped unstarted, and the session is at
// rest afterwards.
func TestInterruptAtEveryMoment(t *testing.T) {
	shell := func(id, cmd string) llm.ToolCall {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return llm.ToolCall{ID: id, Name: "run_shell", Arguments: string(b)}
	}
	type moment struct {
		name      string
		responses []scripted.Response
		extra     map[string]any
		// hold starts what must be interrupted and returns once the turn is
		// at the moment; it returns the turns that must end and those that
		// must be dropped.
		hold func(t *testing.T, ts *testServer, c *client.Client, sid string, p *scripted.Provider, loading chan struct{}) (ended, dropped []string)
	}
	start := func(t *testing.T, c *client.Client, sid string) string {
		id, err := c.StartTurn(tctx(t), sid, "go")
		require.NoError(t, err)
		return id
	}
	moments := []moment{
		{name: "right after turn.start", responses: []scripted.Response{{Text: "never", Gate: "g"}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, _ *scripted.Provider, _ chan struct{}) ([]string, []string) {
				return []string{start(t, c, sid)}, nil
			}},
		{name: "while queued", responses: []scripted.Response{{Text: "first", Gate: "g"}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, p *scripted.Provider, _ chan struct{}) ([]string, []string) {
				a := start(t, c, sid)
				<-p.Gate("g").Reached()
				b := start(t, c, sid)
				return []string{a}, []string{b}
			}},
		{name: "while the engine loads", responses: []scripted.Response{{Text: "never asked"}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, _ *scripted.Provider, loading chan struct{}) ([]string, []string) {
				id := start(t, c, sid)
				<-loading
				return []string{id}, nil
			}},
		{name: "streaming", responses: []scripted.Response{{Text: "half of it", ChunkSize: 2, Gate: "g"}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, p *scripted.Provider, _ chan struct{}) ([]string, []string) {
				id := start(t, c, sid)
				<-p.Gate("g").Reached()
				nextOfType(t, c, sid, "assistant_delta")
				return []string{id}, nil
			}},
		{name: "in a parallel tool batch",
			// explore and list_files run at once; explore's subagent asks the
			// model, whose answer waits at the gate inside the batch.
			responses: []scripted.Response{{ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "explore", Arguments: `{"task":"look around"}`},
				{ID: "c2", Name: "list_files", Arguments: `{"path":"."}`}}},
				{Text: "looking", Gate: "g"}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, p *scripted.Provider, _ chan struct{}) ([]string, []string) {
				id := start(t, c, sid)
				<-p.Gate("g").Reached()
				return []string{id}, nil
			}},
		{name: "in a slow tool", extra: map[string]any{"allowedCommands": []string{"sleep"}},
			responses: []scripted.Response{{ToolCalls: []llm.ToolCall{shell("c1", "sleep 60")}}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, _ *scripted.Provider, _ chan struct{}) ([]string, []string) {
				id := start(t, c, sid)
				nextOfType(t, c, sid, "tool_started")
				return []string{id}, nil
			}},
		{name: "awaiting approval", responses: []scripted.Response{{ToolCalls: []llm.ToolCall{shell("c1", "echo asked")}}},
			hold: func(t *testing.T, _ *testServer, c *client.Client, sid string, _ *scripted.Provider, _ chan struct{}) ([]string, []string) {
				id := start(t, c, sid)
				nextOfType(t, c, sid, "permission_required")
				return []string{id}, nil
			}},
		{name: "suspended",
			hold: func(t *testing.T, ts *testServer, c *client.Client, sid string, _ *scripted.Provider, _ chan struct{}) ([]string, []string) {
				// A turn a dead process left waiting for an answer.
				ctx := tctx(t)
				_, err := ts.st.Append(ctx, sid,
					store.EventInput{TurnID: "t-dead", Type: "turn_start", Data: json.RawMessage(`{"taskId":"t-dead","input":"x"}`), Status: string(backend.StateRunning), CountTask: true},
					store.EventInput{TurnID: "t-dead", Type: "permission_required", Data: json.RawMessage(`{"taskId":"t-dead","requestId":"rq","reqId":"c1","name":"run_shell","arguments":{"command":"echo x"},"reason":"shell","category":"exec","command":"echo","alwaysCommand":true}`),
						Pending: &store.PendingInput{RequestID: "rq", Kind: store.KindApproval, ToolCallID: "c1"}})
				require.NoError(t, err)
				_, err = backend.RecoverInterrupted(ctx, ts.st, nil)
				require.NoError(t, err)
				_, err = c.Subscribe(tctx(t), sid, 0) // a new process's first subscriber
				require.NoError(t, err)
				nextOfType(t, c, sid, "turn_suspended")
				return []string{"t-dead"}, nil
			}},
	}
	for _, m := range moments {
		t.Run(m.name, func(t *testing.T) {
			p := scripted.New(m.responses...)
			loading, release := make(chan struct{}), make(chan struct{})
			hold := m.name == "while the engine loads"
			ts := startServer(t, withProvider(p), func(o *Options) {
				o.OnEngine = func(string, *engine.Engine) {
					if hold {
						close(loading)
						<-release
					}
				}
			})
			c := ts.dial(t)
			sid := ts.session(t, c, m.extra)
			if m.name != "suspended" {
				_, err := c.Subscribe(tctx(t), sid, 0)
				require.NoError(t, err)
			}
			ended, dropped := m.hold(t, ts, c, sid, p, loading)

			var res struct {
				Interrupted bool     `json:"interrupted"`
				Dropped     []string `json:"dropped"`
			}
			require.NoError(t, c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": sid}, &res))
			if hold {
				close(release)
			}
			require.True(t, res.Interrupted)
			require.ElementsMatch(t, dropped, res.Dropped)
			for range ended {
				end := nextOfType(t, c, sid, "turn_end")
				require.Contains(t, ended, end.TurnID)
				var d struct {
					Status string `json:"status"`
				}
				require.NoError(t, json.Unmarshal(end.Data, &d))
				require.Equal(t, "interrupted", d.Status)
			}
			p.Gate("g").Release() // nothing may run on after the interrupt
			require.NoError(t, ts.st.Flush(tctx(t)))

			c2 := ts.dial(t)
			sub, err := c2.Subscribe(tctx(t), sid, 0)
			require.NoError(t, err)
			var all []client.Event
			for int64(len(all)) < sub.LastSeq {
				ev, err := c2.NextEvent(tctx(t), sid)
				require.NoError(t, err)
				all = append(all, ev)
			}
			ends := map[string]int{}
			for _, ev := range all {
				if ev.Type == "turn_end" {
					ends[ev.TurnID]++
				}
				require.NotContains(t, dropped, ev.TurnID, "a dropped turn never starts")
			}
			for _, id := range ended {
				require.Equal(t, 1, ends[id], "turn %s: one turn_end", id)
			}
			require.Len(t, ends, len(ended))
			if hold {
				require.Empty(t, p.Requests(), "the model is never asked")
			}
			require.Empty(t, sub.PendingRequests)
			var g struct {
				Session protocol.Session `json:"session"`
			}
			require.NoError(t, c2.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &g))
			require.False(t, g.Session.Running)
		})
	}
}

// TestDisconnectDropsQueuedTurns: a connection that asked for
// interruptOnDisconnect stops its running turn and drops its queued ones
// when it goes away, from the store's queue too (they must not run after a
// later restart).
func TestDisconnectDropsQueuedTurns(t *testing.T) {
	p := scripted.New(scripted.Response{Text: "first", Gate: "g"})
	ts := startServer(t, withProvider(p))
	watcher := ts.dial(t)
	sid := ts.session(t, watcher, nil)
	_, err := watcher.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	starter, err := dialRaw(ts)
	require.NoError(t, err)
	_, err = starter.Initialize(tctx(t), "t", "1", true)
	require.NoError(t, err)
	first, err := starter.StartTurn(tctx(t), sid, "one")
	require.NoError(t, err)
	<-p.Gate("g").Reached()
	_, err = starter.StartTurn(tctx(t), sid, "two")
	require.NoError(t, err)
	q, err := ts.st.QueuedTurns(tctx(t), sid)
	require.NoError(t, err)
	require.Len(t, q, 1, "acknowledged, so stored")
	require.NoError(t, starter.Close())
	end := nextOfType(t, watcher, sid, "turn_end")
	require.Equal(t, first, end.TurnID)
	h, err := ts.srv.b.Session(tctx(t), sid)
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(tctx(t)))
	q, err = ts.st.QueuedTurns(tctx(t), sid)
	require.NoError(t, err)
	require.Empty(t, q)
	require.NoError(t, ts.st.Flush(tctx(t)))
	ss, err := ts.st.Session(tctx(t), sid)
	require.NoError(t, err)
	require.Equal(t, string(backend.StateInterrupted), ss.Status)
}

// TestInterruptRightAfterEnqueue: a turn that turn.start answered with
// queued: 0 is the session's current turn from that moment on. An
// interrupt that lands before the runner goroutine got to it stops it (one
// turn_end, interrupted); it is never dropped as if it were queued behind
// another. Enqueue and Interrupt run back to back on one goroutine, so
// the runner has had no chance to start (the window that made
// TestInterruptAtEveryMoment/right_after_turn.start fail under load).
func TestInterruptRightAfterEnqueue(t *testing.T) {
	p := scripted.New()
	for range 20 {
		p.Append(scripted.Response{Text: "never", Gate: "g"})
	}
	ts := startServer(t, withProvider(p))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	h, err := ts.srv.b.Session(tctx(t), sid)
	require.NoError(t, err)
	for i := range 20 {
		id := fmt.Sprintf("turn_now_%d", i)
		ahead, err := h.Enqueue(tctx(t), backend.Job{Kind: backend.JobStart, ID: id, Input: engine.Input{Text: "go"}})
		require.NoError(t, err)
		require.Zero(t, ahead, "round %d: nothing runs, so the turn starts now", i)
		running, dropped := h.Interrupt()
		require.True(t, running, "round %d", i)
		require.Empty(t, dropped, "round %d: the current turn is stopped, not dropped", i)
		end := nextOfType(t, c, sid, "turn_end")
		require.Equal(t, id, end.TurnID)
		require.NoError(t, h.WaitIdle(tctx(t)))
	}
}
