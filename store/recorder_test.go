package store

import (
	"encoding/json"
	"testing"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecorderTurn feeds a whole turn of real engine events through the
// recorder and checks the log, the durable request, the checkpoint and the
// session status.
func TestRecorderTurn(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	ss := newSession(t, s)
	rec := s.Recorder(ss.ID)
	require.Equal(t, ss.ID, rec.SessionID())

	var history []llm.Message
	hist := func() []llm.Message { return append([]llm.Message(nil), history...) }
	var got []Event
	record := func(ev engine.Event) {
		t.Helper()
		done := make(chan struct{})
		rec.Record(ev, hist, func(e Event, err error) {
			assert.NoError(t, err)
			got = append(got, e)
			close(done)
		})
		<-done
	}

	start := engine.TurnStartData{Input: "fix it"}
	start.TaskID = "turn1"
	record(engine.Event{Type: engine.EventTurnStart, Data: start})
	st, err := s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, statusRunning, st.Status)
	require.Equal(t, 1, st.TaskCount)

	history = append(history, llm.Message{Role: llm.RoleUser, Content: "fix it"})
	delta := engine.DeltaData{Text: "hel", ReqID: "llm1"}
	delta.TaskID = "turn1"
	record(engine.Event{Type: engine.EventAssistantDelta, Data: delta})
	perm := engine.PermissionRequiredData{ReqID: "call1", RequestID: "req1", Name: "run_shell",
		Arguments: map[string]any{"command": "make"}, Reason: "shell", Category: "exec"}
	perm.TaskID = "turn1"
	record(engine.Event{Type: engine.EventPermissionRequired, Data: perm})
	history = append(history, llm.Message{Role: llm.RoleAssistant, Content: "hello"})
	it := engine.IterationEndData{Iteration: 1}
	it.TaskID = "turn1"
	record(engine.Event{Type: engine.EventIterationEnd, Data: it})

	pend, err := s.PendingRequests(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1)
	require.Equal(t, "req1", pend[0].RequestID)
	require.Equal(t, "call1", pend[0].ToolCallID)
	require.Equal(t, KindApproval, pend[0].Kind)
	require.Equal(t, "turn1", pend[0].TurnID)
	msgs, err := s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 2)

	// A turn interrupted (by the user or a shutdown) keeps its request.
	end := engine.TurnEndData{Status: engine.StatusInterrupted, Iterations: 1, ProducedFiles: []string{}}
	end.TaskID = "turn1"
	record(engine.Event{Type: engine.EventTurnEnd, Data: end})
	st, err = s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, statusInterrupted, st.Status)
	pend, err = s.PendingRequests(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1)

	// A completed turn closes what it left open and checkpoints.
	start.TaskID = "turn2"
	record(engine.Event{Type: engine.EventTurnStart, Data: start})
	q := engine.AskUserQuestionData{ReqID: "call2", RequestID: "req2", Question: "which?", Options: []string{"a", "b"}}
	q.TaskID = "turn2"
	record(engine.Event{Type: engine.EventAskUserQuestion, Data: q})
	history = append(history, llm.Message{Role: llm.RoleAssistant, Content: "done"})
	end.Status, end.TaskID = engine.StatusCompleted, "turn2"
	record(engine.Event{Type: engine.EventTurnEnd, Data: end})
	st, err = s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, StatusIdle, st.Status)
	require.Equal(t, 2, st.TaskCount)
	pend, err = s.PendingRequests(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1, "turn1's request still answerable")
	r2, err := s.Request(ctx, "req2")
	require.NoError(t, err)
	require.True(t, r2.Answered)
	msgs, err = s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 3)

	// session_named renames, but never over the user's title.
	named := engine.SessionNamedData{Name: "Fix the build", Source: "auto"}
	record(engine.Event{Type: engine.EventSessionNamed, Data: named})
	st, err = s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, "Fix the build", st.Title)
	_, err = s.UpdateSession(ctx, ss.ID, func(x *Session) { x.Title, x.TitleSource = "Mine", "user" })
	require.NoError(t, err)
	record(engine.Event{Type: engine.EventSessionNamed, Data: engine.SessionNamedData{Name: "Auto again", Source: "auto"}})
	st, err = s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, "Mine", st.Title)

	// The log is what was recorded, in order, with the seed's field names.
	evs := allEvents(t, s, ss.ID)
	requireGapFree(t, evs)
	require.Equal(t, len(got), len(evs))
	for i := range evs {
		require.Equal(t, got[i].Seq, evs[i].Seq)
		require.Equal(t, got[i].Type, evs[i].Type)
	}
	require.Equal(t, "turn1", evs[0].TurnID)
	var p map[string]any
	require.NoError(t, json.Unmarshal(evs[2].Data, &p))
	require.Equal(t, "req1", p["requestId"])
	require.Equal(t, "call1", p["reqId"])
	require.Equal(t, "turn1", p["taskId"])

	// An interactive event without a requestId is refused, not half-stored.
	bad := engine.PlanProposedData{ReqID: "call3", Plan: "p"}
	errc := make(chan error, 1)
	rec.Record(engine.Event{Type: engine.EventPlanProposed, Data: bad}, nil, func(_ Event, err error) { errc <- err })
	require.ErrorIs(t, <-errc, ErrInvalid)
}

// TestRecoverInterrupted: a session left running by a dead process while
// it waited for an answer gets a turn_suspended (not a turn_end: the turn
// is not over) and keeps its pending request answerable; one with nothing
// pending gets its one turn_end.
func TestRecoverInterrupted(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	running, idle := newSession(t, s), newSession(t, s)
	rec := s.Recorder(running.ID)
	start := engine.TurnStartData{Input: "x"}
	start.TaskID = "tA"
	rec.Record(engine.Event{Type: engine.EventTurnStart, Data: start}, nil, nil)
	dir2 := engine.DirectoryRequestedData{ReqID: "c", RequestID: "dreq", Path: "/data", Reason: "need"}
	dir2.TaskID = "tA"
	rec.Record(engine.Event{Type: engine.EventDirectoryRequested, Data: dir2}, nil, nil)
	require.NoError(t, s.Close()) // as if the process died here

	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	ids, err := s.RecoverInterrupted(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{running.ID}, ids)
	evs := allEvents(t, s, running.ID)
	require.Len(t, evs, 3)
	requireGapFree(t, evs)
	require.Equal(t, "turn_suspended", evs[2].Type)
	require.Equal(t, "tA", evs[2].TurnID)
	require.JSONEq(t, `{"taskId":"tA","reason":"sidecar_restart","pendingRequests":["dreq"]}`,
		string(evs[2].Data))
	st, err := s.Session(ctx, running.ID)
	require.NoError(t, err)
	require.Equal(t, statusInterrupted, st.Status)
	st, err = s.Session(ctx, idle.ID)
	require.NoError(t, err)
	require.Equal(t, StatusIdle, st.Status)

	pend, err := s.PendingRequests(ctx, running.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1)
	require.Equal(t, KindDirectory, pend[0].Kind)
	_, err = s.AnswerRequest(ctx, running.ID, "dreq", json.RawMessage(`{"granted":true}`), "")
	require.NoError(t, err)

	ids, err = s.RecoverInterrupted(ctx)
	require.NoError(t, err)
	require.Empty(t, ids, "only once")
}
