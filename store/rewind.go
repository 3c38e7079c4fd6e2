package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// This file holds what session.rewind needs of the store: the turn events
// it reads the session's turns from, and the rewind intent that makes a
// file restore interrupted by a crash visible on the next start. The
// rewound history and its event are one EventInput (History, EndRewind):
// one transaction.

// RewindIntent is a session's rewind in progress: written before the
// workspace is restored, deleted with the event that ends the rewind
// (EventInput.EndRewind).
type RewindIntent struct {
	SessionID string
	ToTurnID  string
	// Data is the caller's JSON object (what the rewind was doing).
	Data      json.RawMessage
	CreatedAt time.Time
}

// BeginRewind records a session's rewind intent (replacing one left by an
// earlier rewind) and returns after the commit.
func (s *Store) BeginRewind(ctx context.Context, in RewindIntent) error {
	if in.ToTurnID == "" {
		return fmt.Errorf("begin rewind: %w: no turn", ErrInvalid)
	}
	data := in.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	} else if !json.Valid(data) {
		return fmt.Errorf("begin rewind: %w: data is not JSON", ErrInvalid)
	}
	at := in.CreatedAt
	if at.IsZero() {
		at = time.Now()
	}
	err := s.write(ctx, func(t *wtx) error {
		st, err := t.session(in.SessionID)
		if err != nil {
			return refuse(err)
		}
		_, err = t.exec(`INSERT INTO rewind_intents (session_pk, to_turn_id, data, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (session_pk) DO UPDATE SET to_turn_id = excluded.to_turn_id, data = excluded.data, created_at = excluded.created_at`,
			st.pk, in.ToTurnID, string(data), at.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("begin rewind: %w", err)
	}
	return nil
}

// endRewind deletes a session's rewind intent in the transaction.
func (t *wtx) endRewind(pk int64) error {
	if _, err := t.exec("DELETE FROM rewind_intents WHERE session_pk = ?", pk); err != nil {
		return fmt.Errorf("end rewind: %w", err)
	}
	return nil
}

// EndRewind deletes a session's rewind intent without an event (a rewind
// that failed before it changed anything).
func (s *Store) EndRewind(ctx context.Context, sessionID string) error {
	err := s.write(ctx, func(t *wtx) error {
		st, err := t.session(sessionID)
		if err != nil {
			return refuse(err)
		}
		return t.endRewind(st.pk)
	})
	if err != nil {
		return fmt.Errorf("end rewind: %w", err)
	}
	return nil
}

// RewindIntents returns the rewind intents left in the store (by a process
// that died while restoring files), oldest first.
func (s *Store) RewindIntents(ctx context.Context) ([]RewindIntent, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT s.id, r.to_turn_id, r.data, r.created_at
		FROM rewind_intents r JOIN sessions s ON s.pk = r.session_pk ORDER BY r.created_at, s.pk`)
	if err != nil {
		return nil, fmt.Errorf("rewind intents: %w", err)
	}
	defer rows.Close()
	out := []RewindIntent{}
	for rows.Next() {
		var in RewindIntent
		var data []byte
		var ms int64
		if err := rows.Scan(&in.SessionID, &in.ToTurnID, &data, &ms); err != nil {
			return nil, fmt.Errorf("rewind intents: %w", err)
		}
		in.Data, in.CreatedAt = json.RawMessage(data), time.UnixMilli(ms).UTC()
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rewind intents: %w", err)
	}
	return out, nil
}

// RewindIntentOf returns a session's rewind intent (ok false when none).
func (s *Store) RewindIntentOf(ctx context.Context, sessionID string) (RewindIntent, bool, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return RewindIntent{}, false, fmt.Errorf("rewind intent: %w", err)
	}
	in := RewindIntent{SessionID: sessionID}
	var data []byte
	var ms int64
	err = s.rdb.QueryRowContext(ctx, "SELECT to_turn_id, data, created_at FROM rewind_intents WHERE session_pk = ?", pk).
		Scan(&in.ToTurnID, &data, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return RewindIntent{}, false, nil
	}
	if err != nil {
		return RewindIntent{}, false, fmt.Errorf("rewind intent: %w", err)
	}
	in.Data, in.CreatedAt = json.RawMessage(data), time.UnixMilli(ms).UTC()
	return in, true, nil
}

// EventsOfTypes returns a session's events of the given types, in seq
// order.
func (s *Store) EventsOfTypes(ctx context.Context, sessionID string, types ...string) ([]Event, error) {
	if len(types) == 0 {
		return []Event{}, nil
	}
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("events of types: %w", err)
	}
	args := []any{pk}
	for _, typ := range types {
		args = append(args, typ)
	}
	q := "SELECT seq, turn_id, type, data, time FROM events WHERE session_pk = ? AND type IN (?" +
		strings.Repeat(", ?", len(types)-1) + ") ORDER BY seq"
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("events of types: %w", err)
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		e := Event{SessionID: sessionID}
		var data []byte
		var ms int64
		if err := rows.Scan(&e.Seq, &e.TurnID, &e.Type, &data, &ms); err != nil {
			return nil, fmt.Errorf("events of types: %w", err)
		}
		e.Data, e.Time = json.RawMessage(data), time.UnixMilli(ms).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of types: %w", err)
	}
	return out, nil
}
