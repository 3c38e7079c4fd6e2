package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// writerStmts are the writer's statements, prepared once on its connection.
// The writer drives its transactions with them on the connection itself
// (BEGIN IMMEDIATE … COMMIT) rather than through database/sql's Tx, which
// prepares every statement again for each transaction: at one transaction
// per commit of a stream, that was a parse of the INSERT per batch.
type writerStmts struct {
	begin, commit, rollback *sql.Stmt
	insEvent                *sql.Stmt // INSERT INTO events
	updSession              *sql.Stmt // a session's last_seq, checkpoint_seq, updated_at
	putMessage              *sql.Stmt // INSERT OR REPLACE INTO messages

	// others are the rest of the writer's statements, each prepared on
	// its first use (wtx.exec, query, queryRow): a turn's status, queue
	// and request rows were parsed again in every transaction, a tenth of
	// a long session's CPU. Keyed by their text, which is a constant of
	// this package (or one of a few built from constants), so it stays
	// small; only the writer's goroutine uses it.
	conn   *sql.Conn
	others map[string]*sql.Stmt
}

func prepareWriterStmts(ctx context.Context, conn *sql.Conn) (writerStmts, error) {
	s := writerStmts{conn: conn, others: map[string]*sql.Stmt{}}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.begin, "BEGIN IMMEDIATE"},
		{&s.commit, "COMMIT"},
		{&s.rollback, "ROLLBACK"},
		{&s.insEvent, "INSERT INTO events (session_pk, seq, turn_id, type, data, time) VALUES (?, ?, ?, ?, ?, ?)"},
		{&s.updSession, "UPDATE sessions SET last_seq = ?, checkpoint_seq = ?, updated_at = ? WHERE pk = ?"},
		{&s.putMessage, "INSERT OR REPLACE INTO messages (session_pk, idx, data) VALUES (?, ?, ?)"},
	} {
		st, err := conn.PrepareContext(ctx, p.sql)
		if err != nil {
			_ = s.close()
			return writerStmts{}, fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	return s, nil
}

func (s writerStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.begin, s.commit, s.rollback, s.insEvent, s.updSession, s.putMessage} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	for _, st := range s.others {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// stmt is the writer's prepared statement of query, prepared now if this
// is its first use.
func (s writerStmts) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.others[query]; ok {
		return st, nil
	}
	st, err := s.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.others[query] = st
	return st, nil
}

// exec, query and queryRow run a statement of the writer's transaction,
// prepared once (writerStmts.stmt).
func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	st, err := t.w.st.stmt(t.ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(t.ctx, args...)
}

func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	st, err := t.w.st.stmt(t.ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(t.ctx, args...)
}

// queryRow is QueryRowContext's counterpart: a failed prepare is reported
// by the row's Scan.
func (t *wtx) queryRow(query string, args ...any) scanner {
	st, err := t.w.st.stmt(t.ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(t.ctx, args...)
}

// errRow is the row of a statement that did not prepare.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
