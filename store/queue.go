package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Kinds of queued turns.
const (
	TurnStart  = "start"
	TurnRetry  = "retry"
	TurnResume = "resume"
)

// QueuedTurn is a turn that turn.start (or retry, resume) acknowledged and
// that has not started yet. It stays in the queue until the event that
// starts it (or ends it unstarted) is stored with EventInput.Dequeue, so an
// acknowledged turn survives any exit.
type QueuedTurn struct {
	TurnID string
	Kind   string // start | retry | resume
	// From is, for a resume, the turn whose unanswered calls continue.
	From string
	// Input is the host's description of the turn (text, attachment refs):
	// a JSON value the store keeps as given.
	Input json.RawMessage
	// CreatedAt is when the turn was acknowledged (zero: now).
	CreatedAt time.Time
}

// QueueEdit is a change of a session's turn queue, made in an event's
// transaction (EventInput.Queue). The queue's order is its rows' order:
// Order rewrites the rows it names, in its order, after the rows it does
// not name (a turn the runner took but whose turn_start is not stored yet
// stays first).
type QueueEdit struct {
	// Remove takes these turns out of the queue.
	Remove []string
	// Inputs replaces the input (a JSON value) of the turns it names.
	Inputs map[string]json.RawMessage
	// Order, when not empty, is the new order of the turns it names.
	Order []string
}

// editQueue applies a QueueEdit to the session's rows. A turn it names
// that is not queued is refused (ErrNotFound): the host's queue and the
// store's never disagree, so that is a bug; the op's transaction is rolled
// back (the error is not a refusal: its event row is written already).
func (t *wtx) editQueue(sessionPK int64, q *QueueEdit) error {
	have := func(id string) error {
		var n int
		if err := t.queryRow("SELECT count(*) FROM turn_queue WHERE session_pk = ? AND turn_id = ?", sessionPK, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: queued turn %q", ErrNotFound, id)
		}
		return nil
	}
	for _, id := range q.Remove {
		if err := have(id); err != nil {
			return err
		}
		if _, err := t.exec("DELETE FROM turn_queue WHERE session_pk = ? AND turn_id = ?", sessionPK, id); err != nil {
			return fmt.Errorf("remove queued turn: %w", err)
		}
	}
	for id, in := range q.Inputs {
		if !json.Valid(in) {
			return fmt.Errorf("%w: input of %q is not JSON", ErrInvalid, id)
		}
		if err := have(id); err != nil {
			return err
		}
		if _, err := t.exec("UPDATE turn_queue SET input = ? WHERE session_pk = ? AND turn_id = ?", string(in), sessionPK, id); err != nil {
			return fmt.Errorf("update queued turn: %w", err)
		}
	}
	for _, id := range q.Order {
		// Taken out and put back at the end: the rows end up in Order's
		// order, behind the ones it does not name.
		var kind, from, input string
		var created int64
		err := t.queryRow("SELECT kind, from_turn, input, created_at FROM turn_queue WHERE session_pk = ? AND turn_id = ?",
			sessionPK, id).Scan(&kind, &from, &input, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: queued turn %q", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if _, err := t.exec("DELETE FROM turn_queue WHERE session_pk = ? AND turn_id = ?", sessionPK, id); err != nil {
			return fmt.Errorf("move queued turn: %w", err)
		}
		if _, err := t.exec(`INSERT INTO turn_queue (session_pk, turn_id, kind, from_turn, input, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, sessionPK, id, kind, from, input, created); err != nil {
			return fmt.Errorf("move queued turn: %w", err)
		}
	}
	return nil
}

func validTurnKind(k string) bool { return k == TurnStart || k == TurnRetry || k == TurnResume }

// EnqueueTurn appends a turn to the session's queue and, when status is not
// empty, sets the session's status, in one transaction. It returns the
// number of turns queued before this one.
func (s *Store) EnqueueTurn(ctx context.Context, sessionID string, qt QueuedTurn, status string) (int, error) {
	if qt.TurnID == "" || !validTurnKind(qt.Kind) {
		return 0, fmt.Errorf("enqueue turn: %w: turn %q of kind %q", ErrInvalid, qt.TurnID, qt.Kind)
	}
	if len(qt.Input) == 0 {
		qt.Input = json.RawMessage("{}")
	} else if !json.Valid(qt.Input) {
		return 0, fmt.Errorf("enqueue turn: %w: input is not JSON", ErrInvalid)
	}
	if status != "" && !validStatus(status) {
		return 0, fmt.Errorf("enqueue turn: %w: status %q", ErrInvalid, status)
	}
	var ahead int
	created := qt.CreatedAt.UnixMilli()
	err := s.write(ctx, func(t *wtx) error {
		if qt.CreatedAt.IsZero() {
			created = t.nowMS()
		}
		st, err := t.session(sessionID)
		if err != nil {
			return refuse(err)
		}
		if err := t.queryRow("SELECT count(*) FROM turn_queue WHERE session_pk = ?", st.pk).Scan(&ahead); err != nil {
			return err
		}
		if _, err := t.exec(`INSERT INTO turn_queue (session_pk, turn_id, kind, from_turn, input, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, st.pk, qt.TurnID, qt.Kind, qt.From, string(qt.Input), created); err != nil {
			return err
		}
		return t.setStatus(st.pk, status)
	})
	if err != nil {
		return 0, fmt.Errorf("enqueue turn: %w", err)
	}
	return ahead, nil
}

// QueuedTurns returns a session's queued turns, oldest first.
func (s *Store) QueuedTurns(ctx context.Context, sessionID string) ([]QueuedTurn, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("queued turns: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx,
		"SELECT turn_id, kind, from_turn, input, created_at FROM turn_queue WHERE session_pk = ? ORDER BY pk", pk)
	if err != nil {
		return nil, fmt.Errorf("queued turns: %w", err)
	}
	defer rows.Close()
	out := []QueuedTurn{}
	for rows.Next() {
		var qt QueuedTurn
		var input []byte
		var ms int64
		if err := rows.Scan(&qt.TurnID, &qt.Kind, &qt.From, &input, &ms); err != nil {
			return nil, fmt.Errorf("queued turns: %w", err)
		}
		qt.Input, qt.CreatedAt = json.RawMessage(input), fromMS(ms)
		out = append(out, qt)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("queued turns: %w", err)
	}
	return out, nil
}

// DropQueuedTurns removes turns from a session's queue (all of them when
// turnIDs is empty) and, when status is not empty, sets the session's
// status, in one transaction. It returns the ids it removed, in order.
func (s *Store) DropQueuedTurns(ctx context.Context, sessionID, status string, turnIDs ...string) ([]string, error) {
	if status != "" && !validStatus(status) {
		return nil, fmt.Errorf("drop queued turns: %w: status %q", ErrInvalid, status)
	}
	var dropped []string
	err := s.write(ctx, func(t *wtx) error {
		dropped = []string{}
		st, err := t.session(sessionID)
		if err != nil {
			return refuse(err)
		}
		rows, err := t.query("SELECT turn_id FROM turn_queue WHERE session_pk = ? ORDER BY pk", st.pk)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, id := range turnIDs {
			want[id] = true
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			if len(want) == 0 || want[id] {
				dropped = append(dropped, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range dropped {
			if _, err := t.exec("DELETE FROM turn_queue WHERE session_pk = ? AND turn_id = ?", st.pk, id); err != nil {
				return err
			}
		}
		return t.setStatus(st.pk, status)
	})
	if err != nil {
		return nil, fmt.Errorf("drop queued turns: %w", err)
	}
	return dropped, nil
}

// SetStatus sets a session's status (a transition no event carries, such
// as an answer that lets a waiting turn run on). It is queued behind the
// writes before it, so it never overtakes an event's status.
func (s *Store) SetStatus(ctx context.Context, sessionID, status string) error {
	if !validStatus(status) {
		return fmt.Errorf("set status: %w: status %q", ErrInvalid, status)
	}
	err := s.write(ctx, func(t *wtx) error {
		st, err := t.session(sessionID)
		if err != nil {
			return refuse(err)
		}
		return t.setStatus(st.pk, status)
	})
	if err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	return nil
}

// EnqueueStatus queues a session's status change behind the writes before
// it and returns at once (unless the writer's queue is full); done (may be
// nil) gets the commit's result on the writer goroutine. The session host
// calls it under its lock, so statuses land in the order it changed them.
func (s *Store) EnqueueStatus(sessionID, status string, done func(error)) {
	if !validStatus(status) {
		if done != nil {
			done(fmt.Errorf("set status: %w: status %q", ErrInvalid, status))
		}
		return
	}
	o := &op{fn: func(t *wtx) error {
		st, err := t.session(sessionID)
		if err != nil {
			return refuse(err)
		}
		return t.setStatus(st.pk, status)
	}}
	if done != nil {
		o.done = func(_ []Event, err error) { done(err) }
	}
	if err := s.submit(context.Background(), o); err != nil && done != nil {
		done(fmt.Errorf("set status: %w", err))
	}
}

// SessionsWithStatus returns the ids of the sessions in one of the given
// statuses, oldest first.
func (s *Store) SessionsWithStatus(ctx context.Context, statuses ...string) ([]string, error) {
	ids := []string{}
	for _, st := range statuses {
		rows, err := s.rdb.QueryContext(ctx, "SELECT id FROM sessions WHERE status = ? ORDER BY pk", st)
		if err != nil {
			return nil, fmt.Errorf("sessions with status: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sessions with status: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sessions with status: %w", err)
		}
	}
	return ids, nil
}

// SessionsWithQueuedTurns returns the ids of the sessions whose queue is not
// empty, in the order their oldest queued turn was acknowledged.
func (s *Store) SessionsWithQueuedTurns(ctx context.Context) ([]string, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT s.id FROM sessions s JOIN turn_queue q ON q.session_pk = s.pk
		GROUP BY s.pk ORDER BY min(q.pk)`)
	if err != nil {
		return nil, fmt.Errorf("sessions with queued turns: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sessions with queued turns: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// LastEventOfType returns a session's last event of type typ (ok false
// when it has none).
func (s *Store) LastEventOfType(ctx context.Context, sessionID, typ string) (Event, bool, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return Event{}, false, fmt.Errorf("last event: %w", err)
	}
	e := Event{SessionID: sessionID, Type: typ}
	var data []byte
	var ms int64
	err = s.rdb.QueryRowContext(ctx, `SELECT seq, turn_id, data, time FROM events WHERE session_pk = ? AND type = ?
		ORDER BY seq DESC LIMIT 1`, pk, typ).Scan(&e.Seq, &e.TurnID, &data, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, fmt.Errorf("last event: %w", err)
	}
	e.Data, e.Time = json.RawMessage(data), time.UnixMilli(ms).UTC()
	return e, true, nil
}

// setStatus sets a session's status in the transaction ("" leaves it).
func (t *wtx) setStatus(pk int64, status string) error {
	if status == "" {
		return nil
	}
	if _, err := t.exec("UPDATE sessions SET status = ? WHERE pk = ?", status, pk); err != nil {
		return fmt.Errorf("set status: %w", err)
	}
	return nil
}

// TurnStarted reports whether a session has a turn_start event of turnID.
func (s *Store) TurnStarted(ctx context.Context, sessionID, turnID string) (bool, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return false, fmt.Errorf("turn started: %w", err)
	}
	var n int
	err = s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE session_pk = ? AND type = 'turn_start' AND turn_id = ?", pk, turnID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("turn started: %w", err)
	}
	return n > 0, nil
}
