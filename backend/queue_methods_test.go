package backend

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// TestEditableQueue: behind a running turn, queued turns are listed, edited,
// moved and removed; they run in the edited order with the edited text, a
// removed one never runs; every change is one queue_changed event carrying
// the new order (the store's queue matching it at each step), and a turn
// that left the queue is already_started, an unknown one not found.
func TestEditableQueue(t *testing.T) {
	p := scripted.New(
		scripted.Response{Text: "first", Gate: "hold"},
		scripted.Response{Text: "r1"}, scripted.Response{Text: "r2"}, scripted.Response{Text: "r3"})
	b := newTestBackend(t, p)
	ctx := t.Context()
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	sess, err := b.CreateSession(ctx, protocol.SessionCreateParams{ProjectID: proj.ProjectID, Model: "m"})
	require.NoError(t, err)
	sid := sess.SessionID

	first, err := b.StartTurn(ctx, sid, "one", nil)
	require.NoError(t, err)
	<-p.Gate("hold").Reached()
	var ids []string
	for _, text := range []string{"two", "three", "four"} {
		r, err := b.StartTurn(ctx, sid, text, nil)
		require.NoError(t, err)
		ids = append(ids, r.TurnID)
	}
	two, three, four := ids[0], ids[1], ids[2]
	order := func(res protocol.QueueListResult) []string {
		out := []string{}
		for i, e := range res.Entries {
			require.Equal(t, i, e.Position)
			out = append(out, e.TurnID+":"+e.Text)
		}
		return out
	}
	l, err := b.QueueList(ctx, protocol.SessionIDParams{SessionID: sid})
	require.NoError(t, err)
	require.Equal(t, []string{two + ":two", three + ":three", four + ":four"}, order(l))
	_, err = time.Parse(time.RFC3339Nano, l.Entries[0].CreatedAt)
	require.NoError(t, err)

	res, err := b.QueueUpdate(ctx, protocol.QueueUpdateParams{SessionID: sid, TurnID: three, Text: "three, edited"})
	require.NoError(t, err)
	require.Equal(t, []string{two + ":two", three + ":three, edited", four + ":four"}, order(res))
	res, err = b.QueueMove(ctx, protocol.QueueMoveParams{SessionID: sid, TurnID: four, BeforeTurnID: two})
	require.NoError(t, err)
	require.Equal(t, []string{four + ":four", two + ":two", three + ":three, edited"}, order(res))
	res, err = b.QueueMove(ctx, protocol.QueueMoveParams{SessionID: sid, TurnID: two})
	require.NoError(t, err)
	require.Equal(t, []string{four + ":four", three + ":three, edited", two + ":two"}, order(res))
	res, err = b.QueueRemove(ctx, protocol.QueueTurnParams{SessionID: sid, TurnID: two})
	require.NoError(t, err)
	require.Equal(t, []string{four + ":four", three + ":three, edited"}, order(res))
	stored, err := b.opts.Store.QueuedTurns(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, []string{four, three}, turnIDs(stored), "the store's queue has the same order")

	_, err = b.QueueUpdate(ctx, protocol.QueueUpdateParams{SessionID: sid, TurnID: first.TurnID, Text: "x"})
	require.ErrorIs(t, err, ErrAlreadyStarted)
	_, err = b.QueueMove(ctx, protocol.QueueMoveParams{SessionID: sid, TurnID: four, BeforeTurnID: first.TurnID})
	require.ErrorIs(t, err, ErrAlreadyStarted)
	_, err = b.QueueRemove(ctx, protocol.QueueTurnParams{SessionID: sid, TurnID: two})
	require.ErrorIs(t, err, ErrNotFound, "a removed turn is no longer known to the queue")
	_, err = b.QueueRemove(ctx, protocol.QueueTurnParams{SessionID: sid, TurnID: "turn_nope"})
	require.ErrorIs(t, err, ErrNotFound)

	p.Gate("hold").Release()
	h, err := b.host(ctx, sid)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !h.Running() && p.Remaining() == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, h.WaitIdle(ctx))
	var asked []string
	for _, r := range p.Requests() {
		asked = append(asked, lastUser(r.Messages))
	}
	require.Equal(t, []string{"one", "four", "three, edited"}, asked, "the edited order and text; the removed turn never ran")

	// The log: one queue_changed per change, each with the queue then.
	require.NoError(t, b.opts.Store.Flush(ctx))
	evs, err := b.opts.Store.EventsAfter(ctx, sid, 0, 0)
	require.NoError(t, err)
	var seen [][]string
	for _, e := range evs {
		if e.Type != string(protocol.EventQueueChanged) {
			continue
		}
		var d protocol.QueueChangedData
		require.NoError(t, json.Unmarshal(e.Data, &d))
		require.Empty(t, e.TurnID)
		seen = append(seen, order(protocol.QueueListResult{Entries: d.Entries}))
	}
	require.Equal(t, [][]string{
		{two + ":two"},
		{two + ":two", three + ":three"},
		{two + ":two", three + ":three", four + ":four"},
		{two + ":two", three + ":three, edited", four + ":four"},
		{four + ":four", two + ":two", three + ":three, edited"},
		{four + ":four", three + ":three, edited", two + ":two"},
		{four + ":four", three + ":three, edited"},
		{three + ":three, edited"}, // four started
		{},                         // three started
	}, seen)
	stored, err = b.opts.Store.QueuedTurns(ctx, sid)
	require.NoError(t, err)
	require.Empty(t, stored)
}

func turnIDs(qs []store.QueuedTurn) []string {
	out := []string{}
	for _, q := range qs {
		out = append(out, q.TurnID)
	}
	return out
}

func lastUser(msgs []llm.Message) string {
	for _, m := range slices.Backward(msgs) {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}
