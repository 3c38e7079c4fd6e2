package backend

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// TestDurableInput: the one rule of what each event does to durable state.
func TestDurableInput(t *testing.T) {
	hist := func() []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: "hi"}} }
	start := protocol.TurnStartData{Input: "x"}
	start.TaskID = "t1"
	in, err := durableInput(engine.Event{Type: protocol.EventTurnStart, Data: start}, hist, StateRunning)
	require.NoError(t, err)
	require.Equal(t, store.EventInput{TurnID: "t1", Type: "turn_start", Data: in.Data, Status: "running", CountTask: true, Dequeue: true}, in)

	perm := protocol.PermissionRequiredData{ReqID: "c1", RequestID: "r1", Name: "run_shell"}
	perm.TaskID = "t1"
	ev := engine.Event{Type: protocol.EventPermissionRequired, Data: perm}
	st, ok := stateAfter(ev, false)
	require.True(t, ok)
	require.Equal(t, StateAwaiting, st)
	in, err = durableInput(ev, hist, st)
	require.NoError(t, err)
	require.Equal(t, &store.PendingInput{RequestID: "r1", Kind: store.KindApproval, ToolCallID: "c1"}, in.Pending)
	require.Len(t, in.History, 1, "a turn that dies waiting resumes from here")
	require.Equal(t, "awaiting", in.Status)

	end := protocol.TurnEndData{Status: protocol.TurnInterrupted, ProducedFiles: []string{}}
	end.TaskID = "t1"
	ev = engine.Event{Type: protocol.EventTurnEnd, Data: end}
	st, _ = stateAfter(ev, false)
	require.Equal(t, StateInterrupted, st)
	in, err = durableInput(ev, hist, st)
	require.NoError(t, err)
	require.False(t, in.ClosePending, "an interrupted turn's requests stay until the host closes them")
	require.True(t, in.Dequeue)
	require.NotNil(t, in.History)
	end.Status = protocol.TurnCompleted
	ev = engine.Event{Type: protocol.EventTurnEnd, Data: end}
	st, _ = stateAfter(ev, true)
	require.Equal(t, StateQueued, st, "more turns wait")
	in, err = durableInput(ev, nil, st)
	require.NoError(t, err)
	require.True(t, in.ClosePending)
	require.Nil(t, in.History)

	in, err = durableInput(engine.Event{Type: protocol.EventSessionNamed, Data: protocol.SessionNamedData{Name: "N", Source: "auto"}}, nil, "")
	require.NoError(t, err)
	require.Equal(t, &store.Title{Name: "N", Source: "auto"}, in.Title)
	_, ok = stateAfter(engine.Event{Type: protocol.EventAssistantDelta, Data: protocol.DeltaData{Text: "x"}}, false)
	require.False(t, ok)

	_, err = durableInput(engine.Event{Type: protocol.EventPlanProposed, Data: protocol.PlanProposedData{ReqID: "c", Plan: "p"}}, nil, "")
	require.ErrorIs(t, err, store.ErrInvalid, "an interactive event needs its requestId")
}

// TestRecoverInterruptedSettles: at start, a turn that waited for answers
// is suspended (requests answerable), one that ran gets its one turn_end,
// queued turns stay queued.
func TestRecoverInterruptedSettles(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	mk := func() string {
		ss, err := st.CreateSession(ctx, store.Session{})
		require.NoError(t, err)
		return ss.ID
	}
	waiting, running, queued, emptied := mk(), mk(), mk(), mk()
	require.NoError(t, st.SetStatus(ctx, emptied, "queued"))
	_, err = st.Append(ctx, waiting,
		store.EventInput{TurnID: "tw", Type: "turn_start", Status: "running"},
		store.EventInput{TurnID: "tw", Type: "permission_required", Data: json.RawMessage(`{"requestId":"rq"}`), Status: "awaiting",
			Pending: &store.PendingInput{RequestID: "rq", Kind: store.KindApproval}})
	require.NoError(t, err)
	_, err = st.Append(ctx, running, store.EventInput{TurnID: "tr", Type: "turn_start", Status: "running"})
	require.NoError(t, err)
	_, err = st.EnqueueTurn(ctx, queued, store.QueuedTurn{TurnID: "tq", Kind: store.TurnStart}, "queued")
	require.NoError(t, err)

	ids, err := RecoverInterrupted(ctx, st, nil)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{waiting, running}, ids)
	for id, want := range map[string]string{waiting: "suspended", running: "interrupted", queued: "queued", emptied: "idle"} {
		ss, err := st.Session(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, ss.Status, id)
	}
	ev, _, err := st.LastEventOfType(ctx, waiting, "turn_suspended")
	require.NoError(t, err)
	require.JSONEq(t, `{"taskId":"tw","reason":"sidecar_restart","pendingRequests":["rq"]}`, string(ev.Data))
	ev, _, err = st.LastEventOfType(ctx, running, "turn_end")
	require.NoError(t, err)
	require.JSONEq(t, `{"taskId":"tr","status":"interrupted","iterations":0,"produced_files":[],"reason":"sidecar_restart"}`, string(ev.Data))
	ids, err = RecoverInterrupted(ctx, st, nil)
	require.NoError(t, err)
	require.Empty(t, ids, "only once")
}

// TestDurableUsage: a usage event sets the session's usage totals (its
// session tokens, request count and session cost, null when unpriced),
// ordered by its request count.
func TestDurableUsage(t *testing.T) {
	cost := 0.25
	priced := protocol.UsageData{TaskID: "t1", ReqID: "r1", Model: "m", Source: protocol.UsageTurn, Requests: 3,
		Response: protocol.TokenCounts{Input: 5}, Session: protocol.TokenCounts{Input: 50, CachedInput: 10, Output: 7, Reasoning: 2},
		Cost: &protocol.UsageCost{Response: 0.01, Session: &cost}}
	in, err := durableInput(engine.Event{Type: protocol.EventUsage, Data: priced}, nil, "")
	require.NoError(t, err)
	require.Equal(t, int64(3), in.UsageSeq)
	require.JSONEq(t, `{"tokens":{"input":50,"cachedInput":10,"output":7,"reasoning":2},"requests":3,"cost":0.25}`, string(in.Usage))

	unpriced := priced
	unpriced.Requests, unpriced.Cost = 4, nil
	in, err = durableInput(engine.Event{Type: protocol.EventUsage, Data: unpriced}, nil, "")
	require.NoError(t, err)
	require.JSONEq(t, `{"tokens":{"input":50,"cachedInput":10,"output":7,"reasoning":2},"requests":4,"cost":null}`, string(in.Usage))

	in, err = durableInput(engine.Event{Type: protocol.EventRateLimits, Data: protocol.RateLimitsData{TaskID: "t1"}}, nil, "")
	require.NoError(t, err)
	require.Nil(t, in.Usage, "only a usage event sets the totals")
}
