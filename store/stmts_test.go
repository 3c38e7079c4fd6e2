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
