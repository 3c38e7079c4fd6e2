package backend

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// TestTurnEndResolvesItsRequests: a turn that ends (here failed) with a
// request open closes it and records its request_resolved {turn_ended}
// before the turn_end, in one transaction; another turn's request stays.
func TestTurnEndResolvesItsRequests(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	ss, err := st.CreateSession(ctx, store.Session{})
	require.NoError(t, err)
	ask := protocol.AskUserQuestionData{ReqID: "c1", RequestID: "rq1", Question: "?"}
	ask.TaskID = "t1"
	open, err := durableInput(engine.Event{Type: protocol.EventAskUserQuestion, Data: ask}, nil, "")
	require.NoError(t, err)
	other := store.EventInput{TurnID: "t0", Type: "permission_required", Data: json.RawMessage(`{"requestId":"rq0"}`),
		Pending: &store.PendingInput{RequestID: "rq0", Kind: store.KindApproval}}
	_, err = st.Append(ctx, ss.ID, other, open)
	require.NoError(t, err)

	end := protocol.TurnEndData{Status: protocol.TurnError, ProducedFiles: []string{}}
	end.TaskID = "t1"
	in, err := durableInput(engine.Event{Type: protocol.EventTurnEnd, Data: end}, nil, "")
	require.NoError(t, err)
	evs, err := st.Append(ctx, ss.ID, in)
	require.NoError(t, err)
	require.Len(t, evs, 2, "request_resolved, then turn_end")
	require.Equal(t, "request_resolved", evs[0].Type)
	require.Equal(t, "t1", evs[0].TurnID)
	require.JSONEq(t, `{"taskId":"t1","requestId":"rq1","kind":"question","outcome":"turn_ended"}`, string(evs[0].Data))
	require.Equal(t, "turn_end", evs[1].Type)
	require.Equal(t, evs[0].Seq+1, evs[1].Seq)
	stored, err := st.EventsAfter(ctx, ss.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, stored, 4, "stored like any event (replay shows it)")
	require.Equal(t, "request_resolved", stored[2].Type)
	pend, err := st.PendingRequests(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1)
	require.Equal(t, "rq0", pend[0].RequestID, "only the turn's requests close")

	// A turn_end with nothing open records no request_resolved.
	evs, err = st.Append(ctx, ss.ID, in)
	require.NoError(t, err)
	require.Len(t, evs, 1)
}

// TestResolvedOutcome: each answer's outcome.
func TestResolvedOutcome(t *testing.T) {
	for _, c := range []struct{ kind, resp, want string }{
		{store.KindApproval, `{"outcome":"once"}`, protocol.OutcomeApproved},
		{store.KindApproval, `{"outcome":"always_tool"}`, protocol.OutcomeApproved},
		{store.KindApproval, `{"outcome":"deny","note":"no"}`, protocol.OutcomeDenied},
		{store.KindPlan, `{"approved":true}`, protocol.OutcomeApproved},
		{store.KindPlan, `{"approved":false,"feedback":"x"}`, protocol.OutcomeDenied},
		{store.KindDirectory, `{"granted":true}`, protocol.OutcomeGranted},
		{store.KindDirectory, `{"granted":false}`, protocol.OutcomeRefused},
		{store.KindQuestion, `{"answer":"blue"}`, protocol.OutcomeAnswered},
	} {
		require.Equal(t, c.want, resolvedOutcome(c.kind, json.RawMessage(c.resp)), c.kind+" "+c.resp)
	}
}
