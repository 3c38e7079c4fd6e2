package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The writer's transactions run on its connection with prepared
// statements: a failing op rolls its batch back (and only it fails), and a
// transaction left open on the connection is ended before the next batch
// instead of failing every write after it.
func TestWriterTransactionsOnTheConnection(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	sid := newSession(t, s).ID

	boom := errors.New("boom")
	err := s.write(ctx, func(t *wtx) error {
		st, err := t.session(sid)
		if err != nil {
			return err
		}
		if _, err := t.w.st.insEvent.ExecContext(t.ctx, st.pk, 1000, "", "x", "{}", 0); err != nil {
			return err
		}
		return boom // after a write: the whole transaction is rolled back
	})
	require.ErrorIs(t, err, boom)

	// Leave a transaction open on the writer's connection.
	require.NoError(t, s.submitRaw(ctx, func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, "BEGIN")
		return err
	}))
	evs, err := s.Append(ctx, sid, EventInput{Type: "a"}, EventInput{Type: "b"})
	require.NoError(t, err)
	require.Len(t, evs, 2)

	var n int
	require.NoError(t, s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&n))
	require.Equal(t, 2, n, "the failed write left nothing; the appends are committed and visible to readers")
}

// Every statement of the writer is prepared once: a turn's events (status,
// task count, closing its requests, leaving the queue) parse nothing after
// the first turn, and the statements still do their work.
func TestWriterStatementsArePreparedOnce(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	sid := newSession(t, s).ID
	turn := func(id string) {
		_, err := s.Append(ctx, sid,
			EventInput{Type: "turn_start", TurnID: id, Status: "running"},
			EventInput{Type: "turn_end", TurnID: id, Status: StatusIdle, ClosePending: true, CountTask: true, Dequeue: true})
		require.NoError(t, err)
	}
	prepared := func() (n int) {
		require.NoError(t, s.write(ctx, func(t *wtx) error { n = len(t.w.st.others); return nil }))
		return n
	}
	turn("t1")
	after1 := prepared()
	require.NotZero(t, after1, "the turn's statements are in the writer's cache")
	for i := range 20 {
		turn("t" + string(rune('b'+i)))
	}
	require.Equal(t, after1, prepared(), "later turns prepare no statement again")

	var tasks int
	var status string
	require.NoError(t, s.rdb.QueryRowContext(ctx, "SELECT task_count, status FROM sessions WHERE id = ?", sid).Scan(&tasks, &status))
	require.Equal(t, 21, tasks)
	require.Equal(t, StatusIdle, status)
}

// A statement that does not prepare fails its op with SQLite's error, and
// the writer goes on.
func TestWriterStatementThatDoesNotPrepare(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	err := s.write(ctx, func(t *wtx) error {
		var n int
		return t.queryRow("SELECT count(*) FROM no_such_table").Scan(&n)
	})
	require.ErrorContains(t, err, "no_such_table")
	err = s.write(ctx, func(t *wtx) error {
		_, err := t.exec("UPDATE no_such_table SET x = 1")
		return err
	})
	require.ErrorContains(t, err, "no_such_table")
	newSession(t, s) // the writer still writes
}
