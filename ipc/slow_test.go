package ipc

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// A subscriber that does not drain is dropped once its buffer fills; the
// engine and the other subscribers do not wait for it; it learns the last
// seq it got and can continue from there.
func TestSlowSubscriberIsDropped(t *testing.T) {
	ts := startServer(t,
		withProvider(scripted.New(scripted.Response{Text: strings.Repeat("y", 200), ChunkSize: 1})),
		// One live event: a turn has at least six events (its deltas may be
		// coalesced into one), so the stuck subscriber overflows whatever
		// the store's pace.
		func(o *Options) { o.SubscriberBuffer = 1 },
	)
	c := ts.dial(t)
	sid := ts.session(t, c, nil)

	h, err := ts.srv.b.Session(tctx(t), sid)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A connection whose writer never runs: its queue has room for one frame.
	stuck := newConn(ts.srv, wsrpc.NewDetached(ctx, ts.srv.log, 1))
	sub, upTo, _ := h.Subscribe(stuck.Conn, 0, stuck.presence())
	sub.MarkReady()
	go sub.Pump(0, upTo)

	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(tctx(t))) // the engine never waited for the stuck subscriber
	require.NoError(t, ts.st.Flush(tctx(t)))
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Equal(t, strings.Repeat("y", 200), textOf(evs))

	<-sub.Dropped()
	require.False(t, h.Subscribed(sub), "dropped subscriber is unregistered")

	// Drain what the stuck connection was given: events in order, then the
	// dropped notification naming the last seq delivered.
	var last int64
	for {
		frame := stuck.Take()
		if frame == nil {
			<-stuck.Queued()
			continue
		}
		var n struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		require.NoError(t, json.Unmarshal(frame, &n))
		if n.Method == "session.dropped" {
			var d protocol.SessionDropped
			require.NoError(t, json.Unmarshal(n.Params, &d))
			require.Equal(t, last, d.LastSeq)
			require.Equal(t, "fell behind", d.Reason)
			break
		}
		var ev struct {
			Seq int64 `json:"seq"`
		}
		require.NoError(t, json.Unmarshal(n.Params, &ev))
		require.Equal(t, last+1, ev.Seq)
		last = ev.Seq
	}
	<-sub.Done()
	require.Less(t, last, evs[len(evs)-1].Seq)

	// Continuing from the last seq gives the rest with no gap.
	c2 := ts.dial(t)
	_, err = c2.Subscribe(tctx(t), sid, last)
	require.NoError(t, err)
	rest := collectTurn(t, c2, sid)
	requireGapless(t, rest, last+1)
}

func TestInterruptAndInterruptOnDisconnect(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{Text: "thinking", Stall: true},
		scripted.Response{Text: "thinking again", Stall: true},
	)))
	watcher := ts.dial(t)
	sid := ts.session(t, watcher, nil)
	_, err := watcher.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	// turn.interrupt
	_, err = watcher.StartTurn(tctx(t), sid, "one")
	require.NoError(t, err)
	nextOfType(t, watcher, sid, "assistant_delta")
	var ir struct {
		Interrupted bool `json:"interrupted"`
	}
	require.NoError(t, watcher.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": sid}, &ir))
	require.True(t, ir.Interrupted)
	end := nextOfType(t, watcher, sid, "turn_end")
	require.Contains(t, string(end.Data), `"status":"interrupted"`)

	// A connection that asked for interruptOnDisconnect stops its turns when
	// it goes away.
	starter, err := dialRaw(ts)
	require.NoError(t, err)
	_, err = starter.Initialize(tctx(t), "t", "1", true)
	require.NoError(t, err)
	_, err = starter.StartTurn(tctx(t), sid, "two")
	require.NoError(t, err)
	nextOfType(t, watcher, sid, "assistant_delta")
	require.NoError(t, starter.Close())
	end = nextOfType(t, watcher, sid, "turn_end")
	require.Contains(t, string(end.Data), `"status":"interrupted"`)
}

func TestTurnKeepsRunningAfterDisconnect(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: "finished alone", Delay: 20e6})))
	starter := ts.dial(t)
	sid := ts.session(t, starter, nil)
	_, err := starter.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	require.NoError(t, starter.Close())
	c := ts.dial(t)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Equal(t, "finished alone", textOf(evs))
	require.Contains(t, string(evs[len(evs)-1].Data), `"status":"completed"`)
}
