package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RestartReason is the reason of the turn_suspended or turn_end recorded
// for turns found dead at start.
const RestartReason = "sidecar_restart"

// RecoverInterrupted finds the sessions a dead process left running and
// marks them interrupted. A session whose last turn waits for answers gets
// a turn_suspended event (reason sidecar_restart, the open request ids):
// the turn is not over, its requests stay answerable, and the answer
// resumes it under the same turn id. Any other gets that turn's one
// turn_end (status interrupted, reason sidecar_restart). It returns the
// recovered session ids; call it once at start, before any turn runs.
func (s *Store) RecoverInterrupted(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.write(ctx, func(t *wtx) error {
		ids = ids[:0]
		rows, err := t.tx.QueryContext(t.ctx, "SELECT id FROM sessions WHERE status = ? ORDER BY pk", statusRunning)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now := time.Now()
		for _, id := range ids {
			st, err := t.session(id)
			if err != nil {
				return err
			}
			var turnID string
			err = t.tx.QueryRowContext(t.ctx, `SELECT turn_id FROM events WHERE session_pk = ? AND type = ?
				ORDER BY seq DESC LIMIT 1`, st.pk, typeTurnStart).Scan(&turnID)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			// A turn that waits for answers is suspended, not ended: its
			// requests stay answerable and the answer resumes it under the
			// same turn id, whose one turn_end comes when it really ends.
			pending, err := t.openRequestIDs(st.pk)
			if err != nil {
				return err
			}
			typ := typeTurnEnd
			var data []byte
			if len(pending) > 0 {
				typ = typeTurnSuspended
				data, err = json.Marshal(turnSuspended{TaskID: turnID, Reason: RestartReason, PendingRequests: pending})
			} else {
				data, err = json.Marshal(turnEnd{TaskID: turnID, Status: "interrupted", ProducedFiles: []string{},
					Reason: RestartReason})
			}
			if err != nil {
				return err
			}
			pe, err := prepareEvent(EventInput{TurnID: turnID, Type: typ, Data: data,
				Time: now, Status: statusInterrupted})
			if err != nil {
				return err
			}
			if _, err := t.appendEvents(id, []preparedEvent{pe}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recover interrupted sessions: %w", err)
	}
	return ids, nil
}

// Event types the store itself reads or writes (engine/event.go names).
const (
	typeTurnStart     = "turn_start"
	typeTurnEnd       = "turn_end"
	typeTurnSuspended = "turn_suspended"
	typeSessionNamed  = "session_named"
)

// turnSuspended is engine.TurnSuspendedData's wire shape.
type turnSuspended struct {
	TaskID          string   `json:"taskId"`
	Reason          string   `json:"reason"`
	PendingRequests []string `json:"pendingRequests"`
}

// openRequestIDs lists the unanswered requests of a session, in order.
func (t *wtx) openRequestIDs(sessionPK int64) ([]string, error) {
	rows, err := t.tx.QueryContext(t.ctx, "SELECT request_id FROM pending_requests WHERE session_pk = ? AND answered = 0 ORDER BY seq, rowid", sessionPK)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// turnEnd is engine.TurnEndData's wire shape, for the synthetic turn_end.
type turnEnd struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	Iterations    int      `json:"iterations"`
	ProducedFiles []string `json:"produced_files"`
	Reason        string   `json:"reason,omitempty"`
}
