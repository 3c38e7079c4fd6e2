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
}

func prepareWriterStmts(ctx context.Context, conn *sql.Conn) (writerStmts, error) {
	var s writerStmts
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
	return errors.Join(errs...)
}
