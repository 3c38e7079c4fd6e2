package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnswerCommitsWithItsEvent: EventInput.Answer stores the answer and
// the event in one transaction: neither without the other, and a second
// answer stores nothing.
func TestAnswerCommitsWithItsEvent(t *testing.T) {
	s := openTest(t)
	ss := newSession(t, s)
	ctx := context.Background()
	_, err := s.Append(ctx, ss.ID, EventInput{TurnID: "t1", Type: "permission_required", Data: json.RawMessage(`{"taskId":"t1","requestId":"rq","reqId":"c1"}`),
		Pending: &PendingInput{RequestID: "rq", Kind: KindApproval, ToolCallID: "c1"}})
	require.NoError(t, err)
	resolved := func() EventInput {
		return EventInput{TurnID: "t1", Type: "request_resolved", Data: json.RawMessage(`{"taskId":"t1","requestId":"rq","kind":"approval","outcome":"denied"}`),
			Answer: &Answer{RequestID: "rq", Response: json.RawMessage(`{"outcome":"deny"}`)}}
	}
	last := func() int64 {
		n, err := s.LastSeq(ctx, ss.ID)
		require.NoError(t, err)
		return n
	}

	db, err := sql.Open("sqlite", s.Path())
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE TRIGGER fail_resolved BEFORE INSERT ON events WHEN NEW.type = 'request_resolved'
		BEGIN SELECT RAISE(ABORT, 'injected commit failure'); END`)
	require.NoError(t, err)
	_, err = s.Append(ctx, ss.ID, resolved())
	require.Error(t, err)
	p, err := s.Request(ctx, "rq")
	require.NoError(t, err)
	require.False(t, p.Answered, "the answer is rolled back with its event")
	require.Equal(t, int64(1), last())
	_, err = db.ExecContext(ctx, `DROP TRIGGER fail_resolved`)
	require.NoError(t, err)

	evs, err := s.Append(ctx, ss.ID, resolved())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, int64(2), evs[0].Seq)
	p, err = s.Request(ctx, "rq")
	require.NoError(t, err)
	require.True(t, p.Answered)
	require.JSONEq(t, `{"outcome":"deny"}`, string(p.Response))

	_, err = s.Append(ctx, ss.ID, resolved())
	require.ErrorIs(t, err, ErrAlreadyAnswered)
	require.Equal(t, int64(2), last(), "a refused answer records no event")
	bad := resolved()
	bad.Answer.RequestID = "unknown"
	_, err = s.Append(ctx, ss.ID, bad)
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, int64(2), last())
}
