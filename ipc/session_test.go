package ipc

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

func TestStreamingTurn(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: "hello from the script", ChunkSize: 3})))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	res, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	require.Zero(t, res.LastSeq)
	turnID, err := c.StartTurn(tctx(t), sid, "hi")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	requireGapless(t, evs, 1)
	require.Equal(t, "turn_start", evs[0].Type)
	require.Equal(t, "hello from the script", textOf(evs))
	for _, ev := range evs {
		require.Equal(t, turnID, ev.TurnID)
	}
	var end struct {
		Status string `json:"status"`
	}
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &end))
	require.Equal(t, "completed", end.Status)

	// A second connection replays the whole turn from the store.
	c2 := ts.dial(t)
	_, err = c2.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	replay := collectTurn(t, c2, sid)
	require.Len(t, replay, len(evs))
	require.Equal(t, textOf(evs), textOf(replay))

	var got protocol.SessionGetResult
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	require.GreaterOrEqual(t, len(got.Messages), 2)
	last := got.Messages[len(got.Messages)-1]
	require.Equal(t, "assistant", last.Role)
	require.Equal(t, "hello from the script", last.Content)
}

func TestTurnsQueueFIFO(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{Text: "one", Delay: 2e6},
		scripted.Response{Text: "two"},
		scripted.Response{Text: "three"},
	)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	var ids []string
	for _, text := range []string{"a", "b", "c"} {
		id, err := c.StartTurn(tctx(t), sid, text)
		require.NoError(t, err)
		ids = append(ids, id)
	}
	for i, want := range []string{"one", "two", "three"} {
		evs := collectTurn(t, c, sid)
		// Its first event of a turn (queue_changed, of no turn, may come before).
		first := evs[slices.IndexFunc(evs, func(ev client.Event) bool { return ev.TurnID != "" })]
		require.Equal(t, ids[i], first.TurnID)
		require.Equal(t, want, textOf(evs))
	}
}

func TestSubscribeDuringProductionHasNoGapNoDuplicate(t *testing.T) {
	long := make([]byte, 3000)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: string(long), ChunkSize: 1})))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	// Subscribe from several connections while the turn streams.
	var clients []*client.Client
	for range 3 {
		cc := ts.dial(t)
		_, err := cc.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		clients = append(clients, cc)
	}
	var evs []client.Event
	for _, cc := range clients {
		evs = collectTurn(t, cc, sid)
		requireGapless(t, evs, 1)
		require.Equal(t, string(long), textOf(evs))
	}
	// Resubscribe from the middle (deltas may be coalesced: the middle of
	// what was stored, not of the chunks).
	mid := evs[len(evs)/2].Seq
	cc := ts.dial(t)
	_, err = cc.Subscribe(tctx(t), sid, mid)
	require.NoError(t, err)
	evs = collectTurn(t, cc, sid)
	requireGapless(t, evs, mid+1)
}

func TestInterruptWhileApprovalPendingClosesRequest(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell", Arguments: `{"command":"echo hi"}`}}},
	)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	perm := nextOfType(t, c, sid, "permission_required")
	var d struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(perm.Data, &d))
	require.NoError(t, c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": sid}, nil))
	end := nextOfType(t, c, sid, "turn_end")
	require.Contains(t, string(end.Data), `"status":"interrupted"`)
	h := ts.srv.b.LoadedSession(sid)
	require.NoError(t, h.WaitIdle(tctx(t)))
	var got protocol.SessionGetResult
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	require.Empty(t, got.PendingRequests)
	err = c.Respond(tctx(t), sid, d.RequestID, map[string]string{"outcome": "once"})
	require.Equal(t, client.CodeConflict, client.Code(err))
	var we *client.Error
	require.ErrorAs(t, err, &we)
	require.Equal(t, protocol.KindAlreadyAnswered, we.Data.Kind)
	require.NotEmpty(t, we.Data.Message, "already_answered is shown to people")
}

func TestExploreSubagentToolCallsAreForwarded(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "x1", Name: "explore", Arguments: `{"task":"look around"}`}}},
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "k1", Name: "list_files", Arguments: `{"path":"."}`}}}, // the child
		scripted.Response{Text: "the child's report"},                                                           // the child
		scripted.Response{Text: "explored"},                                                                     // the parent
	)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turnID, err := c.StartTurn(tctx(t), sid, "explore")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	requireGapless(t, evs, 1)
	var forwarded, explore int
	for _, ev := range evs {
		if ev.Type != "tool_finished" {
			continue
		}
		var d struct {
			Name        string `json:"name"`
			ParentReqID string `json:"parentReqId"`
			Status      string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		switch d.Name {
		case "list_files":
			require.Equal(t, "x1", d.ParentReqID)
			require.Equal(t, turnID, ev.TurnID)
			forwarded++
		case "explore":
			require.Equal(t, "ok", d.Status)
			explore++
		}
	}
	require.Equal(t, 1, forwarded)
	require.Equal(t, 1, explore)
	require.Equal(t, "explored", textOf(evs))
}
