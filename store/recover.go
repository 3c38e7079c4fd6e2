package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RestartReason is the turn_end reason of turns found dead at start.
const RestartReason = "sidecar_restart"

// RecoverInterrupted finds the sessions a dead process left running, marks
// them interrupted and appends to each a synthetic turn_end (status
// interrupted, reason sidecar_restart) for its last turn, with the next
// seq. Their pending requests stay pending, so the UI can still answer them
// and the turn can be resumed. It returns the recovered session ids; call
// it once at start, before any turn runs.
func (s *Store) RecoverInterrupted(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.write(ctx, func(t *wtx) error {
		ids = ids[:0]
		rows, err := t.tx.QueryContext(t.ctx, "SELECT id FROM sessions WHERE status = ? ORDER BY pk", StatusRunning)
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
			data, err := json.Marshal(turnEnd{TaskID: turnID, Status: "interrupted", ProducedFiles: []string{},
				Reason: RestartReason})
			if err != nil {
				return err
			}
			pe, err := prepareEvent(EventInput{TurnID: turnID, Type: typeTurnEnd, Data: data,
				Time: now, Status: StatusInterrupted})
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
	typeTurnStart    = "turn_start"
	typeTurnEnd      = "turn_end"
	typeSessionNamed = "session_named"
)

// turnEnd is engine.TurnEndData's wire shape, for the synthetic turn_end.
type turnEnd struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	Iterations    int      `json:"iterations"`
	ProducedFiles []string `json:"produced_files"`
	Reason        string   `json:"reason,omitempty"`
}
