package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLedgerBeginReadsTheCommittedStart: Begin returns nil only once the
// call's tool_started row is committed; a start whose commit failed (here a
// trigger aborts the insert, as a full disk would) is not in the ledger and
// Begin says so. Started lists every call that began, finished or not.
func TestLedgerBeginReadsTheCommittedStart(t *testing.T) {
	s := openTest(t)
	ss := newSession(t, s)
	ctx := context.Background()
	l := s.Ledger(ss.ID)
	started := func(call string) EventInput {
		return EventInput{TurnID: "t1", Type: "tool_started", Data: json.RawMessage(`{"taskId":"t1","reqId":"` + call + `","name":"run_shell"}`)}
	}
	s.Enqueue(ss.ID, started("c1"), nil)
	require.NoError(t, l.Begin(ctx, "t1", "c1"))
	require.ErrorIs(t, l.Begin(ctx, "t1", "c-never"), ErrNotFound, "a call whose start was never recorded")
	require.ErrorIs(t, l.Begin(ctx, "t2", "c1"), ErrNotFound, "another turn's call")

	// A failing commit: the start is not durable, and Begin tells.
	db, err := sql.Open("sqlite", s.Path())
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE TRIGGER fail_start BEFORE INSERT ON events WHEN NEW.type = 'tool_started'
		BEGIN SELECT RAISE(ABORT, 'injected commit failure'); END`)
	require.NoError(t, err)
	var commitErr error
	done := make(chan struct{})
	s.Enqueue(ss.ID, started("c2"), func(_ Event, err error) { commitErr = err; close(done) })
	err = l.Begin(ctx, "t1", "c2")
	<-done
	require.Error(t, commitErr)
	require.ErrorIs(t, err, ErrNotFound, "the failed start is not in the ledger")
	_, err = db.ExecContext(ctx, `DROP TRIGGER fail_start`)
	require.NoError(t, err)

	got, err := l.Started(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, []string{"c1"}, got)
	s.Enqueue(ss.ID, EventInput{TurnID: "t1", Type: "tool_finished", Data: json.RawMessage(`{"taskId":"t1","reqId":"c1","status":"ok"}`)}, nil)
	require.NoError(t, s.Flush(ctx))
	got, err = l.Started(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, []string{"c1"}, got, "a call that began stays begun, finished or not")

	require.ErrorIs(t, s.Ledger("no-such-session").Begin(ctx, "t1", "c1"), ErrNotFound)
}
