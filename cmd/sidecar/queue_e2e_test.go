package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2EEditableQueue: behind a turn held at a gate, three queued turns
// are edited, moved and removed over the wire (one window), while another
// window sees each change as a queue_changed event with the new order;
// a started turn is already_started, an unknown one not found. Then kill -9:
// the next process runs the queue in its edited order with the edited text,
// the removed turn never runs, and each start records the queue left.
func TestE2EEditableQueue(t *testing.T) {
	script, gates := gatedScript(t, map[string]any{"text": "first", "gate": "hold"})
	e := setup(t, script, nil)
	other := e.p.connect(t) // a second window
	_, err := other.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	first, err := e.c.StartTurn(tctx(t), e.sid, "first")
	require.NoError(t, err)
	waitFile(t, filepath.Join(gates, "hold.reached"))
	a, err := e.c.StartTurn(tctx(t), e.sid, "a")
	require.NoError(t, err)
	b, err := e.c.StartTurn(tctx(t), e.sid, "b")
	require.NoError(t, err)
	c, err := e.c.StartTurn(tctx(t), e.sid, "c")
	require.NoError(t, err)

	type queue = []string // "turnId:text", in order
	entries := func(list []protocol.QueueEntry) queue {
		out := queue{}
		for i, en := range list {
			require.Equal(t, i, en.Position)
			require.NotEmpty(t, en.CreatedAt)
			out = append(out, en.TurnID+":"+en.Text)
		}
		return out
	}
	call := func(method string, params map[string]any) queue {
		t.Helper()
		params["sessionId"] = e.sid
		var res protocol.QueueListResult
		require.NoError(t, e.c.Call(tctx(t), method, params, &res), method)
		return entries(res.Entries)
	}
	require.Equal(t, queue{a + ":a", b + ":b", c + ":c"}, call("queue.list", map[string]any{}))
	require.Equal(t, queue{a + ":a", b + ":b edited", c + ":c"}, call("queue.update", map[string]any{"turnId": b, "text": "b edited"}))
	require.Equal(t, queue{c + ":c", a + ":a", b + ":b edited"}, call("queue.move", map[string]any{"turnId": c, "beforeTurnId": a}))
	require.Equal(t, queue{c + ":c", b + ":b edited"}, call("queue.remove", map[string]any{"turnId": a}))

	err = e.c.Call(tctx(t), "queue.update", map[string]any{"sessionId": e.sid, "turnId": first, "text": "too late"}, nil)
	var we *client.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeConflict, we.Code)
	require.Equal(t, protocol.KindAlreadyStarted, we.Data.Kind)
	require.Equal(t, protocol.KindAlreadyStarted, we.Data.Reason, "data.reason, as issue 31 names it")
	err = e.c.Call(tctx(t), "queue.move", map[string]any{"sessionId": e.sid, "turnId": "turn_unknown"}, nil)
	require.Equal(t, client.CodeNotFound, client.Code(err))
	err = e.c.Call(tctx(t), "queue.remove", map[string]any{"sessionId": e.sid, "turnId": a}, nil)
	require.Equal(t, client.CodeNotFound, client.Code(err), "a removed turn is gone")

	// The other window saw every change, in order.
	want := []queue{
		{a + ":a"}, {a + ":a", b + ":b"}, {a + ":a", b + ":b", c + ":c"},
		{a + ":a", b + ":b edited", c + ":c"},
		{c + ":c", a + ":a", b + ":b edited"},
		{c + ":c", b + ":b edited"},
	}
	var seen []queue
	for len(seen) < len(want) {
		ev, err := other.NextEvent(tctx(t), e.sid)
		require.NoError(t, err)
		if ev.Type == string(protocol.EventQueueChanged) {
			var d protocol.QueueChangedData
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			seen = append(seen, entries(d.Entries))
		}
	}
	require.Equal(t, want, seen)

	e.p.kill9(t)
	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("c ran"), text("b ran")))
	c2 := p2.connect(t)
	_, err = c2.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	var evs []client.Event
	for turnEnds(evs)[b] == 0 {
		ev, err := c2.NextEvent(tctx(t), e.sid)
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	var started, queues []string
	for _, ev := range evs {
		switch ev.Type {
		case "turn_start":
			started = append(started, ev.TurnID+":"+dataOf(t, ev)["input"].(string))
		case string(protocol.EventQueueChanged):
			var d protocol.QueueChangedData
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			queues = append(queues, fmtQueue(entries(d.Entries)))
		}
	}
	require.Equal(t, []string{first + ":first", c + ":c", b + ":b edited"}, started, "the edited order and text survive kill -9; the removed turn never runs")
	require.Equal(t, map[string]int{first: 1, c: 1, b: 1}, turnEnds(evs))
	last := queues[len(queues)-1]
	require.Equal(t, "", last, "b started: the queue is empty")
	require.Contains(t, queues, fmtQueue(queue{c + ":c", b + ":b edited"}), "the queue before the kill, as stored")
}

func fmtQueue(q []string) string {
	b, _ := json.Marshal(q)
	if len(q) == 0 {
		return ""
	}
	return string(b)
}
