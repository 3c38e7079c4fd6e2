package store

import (
	"context"
	"fmt"

	"github.com/zqagent/sidecar/llm"
)

// SessionState is a consistent view of a session (what session.get
// returns): the row, the checkpointed history and the unanswered requests,
// all read in one transaction.
type SessionState struct {
	Session         Session          `json:"session"`
	Messages        []llm.Message    `json:"messages"`
	PendingRequests []PendingRequest `json:"pendingRequests"`
}

// SessionState reads a session, its history and its pending requests from
// one snapshot of the database.
func (s *Store) SessionState(ctx context.Context, id string) (SessionState, error) {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return SessionState{}, fmt.Errorf("session state: %w", err)
	}
	defer tx.Rollback() // read only: nothing to commit
	var st SessionState
	st.Session, err = scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
	if err != nil {
		return SessionState{}, fmt.Errorf("session state: %w", notFound(err, "session", id))
	}
	pk, err := sessionPK(ctx, tx, id)
	if err != nil {
		return SessionState{}, fmt.Errorf("session state: %w", err)
	}
	if st.Messages, err = messages(ctx, tx, pk); err != nil {
		return SessionState{}, fmt.Errorf("session state: %w", err)
	}
	if st.PendingRequests, err = pendingRequests(ctx, tx, pk); err != nil {
		return SessionState{}, fmt.Errorf("session state: %w", err)
	}
	return st, nil
}
