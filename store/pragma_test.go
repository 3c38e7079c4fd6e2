package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPragmasOnEveryConnection holds several pooled read connections at once
// (so each is a distinct connection) and reads the pragmas back from each,
// and from the writer's connection.
func TestPragmasOnEveryConnection(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	const n = 4
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := s.rdb.Conn(ctx)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	for i, c := range conns {
		checkPragmas(t, ctx, c, true, fmt.Sprintf("read conn %d", i))
	}
	// The writer's connection, read on the writer goroutine.
	require.NoError(t, s.submitRaw(ctx, func(ctx context.Context, c *sql.Conn) error {
		checkPragmas(t, ctx, c, false, "write conn")
		return nil
	}))
	require.NoError(t, s.w.conn.PingContext(ctx))
}

func checkPragmas(t *testing.T, ctx context.Context, c *sql.Conn, readOnly bool, name string) {
	get := func(p string) string {
		var v string
		if err := c.QueryRowContext(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			t.Errorf("%s: PRAGMA %s: %v", name, p, err)
		}
		return strings.ToLower(v)
	}
	checks := map[string]string{
		"journal_mode": "wal",
		"busy_timeout": "5000",
		"foreign_keys": "1",
		"synchronous":  "1", // NORMAL
	}
	if readOnly {
		checks["query_only"] = "1"
	} else {
		checks["query_only"] = "0"
	}
	for p, want := range checks {
		if got := get(p); got != want {
			t.Errorf("%s: PRAGMA %s = %q, want %q", name, p, got, want)
		}
	}
}
