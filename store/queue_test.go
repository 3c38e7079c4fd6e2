package store

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTurnQueue: a queued turn and the session status change in one
// transaction; the event that starts a turn dequeues it in its own; drop
// removes what is left; the queue survives a reopen.
func TestTurnQueue(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	ss, other := newSession(t, s), newSession(t, s)

	n, err := s.EnqueueTurn(ctx, ss.ID, QueuedTurn{TurnID: "t1", Kind: TurnStart, Input: json.RawMessage(`{"text":"one","refs":[{"name":"a.png"}]}`)}, "queued")
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = s.EnqueueTurn(ctx, ss.ID, QueuedTurn{TurnID: "t2", Kind: TurnResume, From: "t0"}, "")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = s.EnqueueTurn(ctx, other.ID, QueuedTurn{TurnID: "t3", Kind: TurnRetry}, "queued")
	require.NoError(t, err)
	_, err = s.EnqueueTurn(ctx, ss.ID, QueuedTurn{TurnID: "t1", Kind: TurnStart}, "")
	require.Error(t, err, "a turn id is queued once")
	_, err = s.EnqueueTurn(ctx, ss.ID, QueuedTurn{TurnID: "t9", Kind: "later"}, "")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = s.EnqueueTurn(ctx, "nope", QueuedTurn{TurnID: "t9", Kind: TurnStart}, "")
	require.ErrorIs(t, err, ErrNotFound)
	got, err := s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, "queued", got.Status)

	ids, err := s.SessionsWithQueuedTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{ss.ID, other.ID}, ids)
	require.NoError(t, s.Close())

	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	q, err := s.QueuedTurns(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, q, 2)
	require.Equal(t, "t1", q[0].TurnID)
	require.Equal(t, TurnStart, q[0].Kind)
	require.JSONEq(t, `{"text":"one","refs":[{"name":"a.png"}]}`, string(q[0].Input))
	require.Equal(t, QueuedTurn{TurnID: "t2", Kind: TurnResume, From: "t0", Input: json.RawMessage(`{}`), CreatedAt: q[1].CreatedAt}, q[1])

	// turn_start dequeues its turn and sets the status in its transaction.
	_, err = s.Append(ctx, ss.ID, EventInput{TurnID: "t1", Type: "turn_start", Dequeue: true, Status: "running", CountTask: true})
	require.NoError(t, err)
	q, err = s.QueuedTurns(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, q, 1)
	require.Equal(t, "t2", q[0].TurnID)
	got, err = s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, "running", got.Status)
	require.Equal(t, 1, got.TaskCount)

	dropped, err := s.DropQueuedTurns(ctx, ss.ID, "idle")
	require.NoError(t, err)
	require.Equal(t, []string{"t2"}, dropped)
	got, err = s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, "idle", got.Status)
	dropped, err = s.DropQueuedTurns(ctx, other.ID, "", "t-unknown")
	require.NoError(t, err)
	require.Empty(t, dropped)
	dropped, err = s.DropQueuedTurns(ctx, other.ID, "", "t3")
	require.NoError(t, err)
	require.Equal(t, []string{"t3"}, dropped)
	ids, err = s.SessionsWithQueuedTurns(ctx)
	require.NoError(t, err)
	require.Empty(t, ids)

	require.NoError(t, s.SetStatus(ctx, ss.ID, "awaiting"))
	ids, err = s.SessionsWithStatus(ctx, "running", "awaiting")
	require.NoError(t, err)
	require.Equal(t, []string{ss.ID}, ids)
	require.ErrorIs(t, s.SetStatus(ctx, ss.ID, "Bad status"), ErrInvalid)
	ev, ok, err := s.LastEventOfType(ctx, ss.ID, "turn_start")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "t1", ev.TurnID)
	_, ok, err = s.LastEventOfType(ctx, other.ID, "turn_start")
	require.NoError(t, err)
	require.False(t, ok)

	// A deleted session takes its queue with it.
	_, err = s.EnqueueTurn(ctx, other.ID, QueuedTurn{TurnID: "t4", Kind: TurnStart}, "")
	require.NoError(t, err)
	require.NoError(t, s.DeleteSession(ctx, other.ID))
	ids, err = s.SessionsWithQueuedTurns(ctx)
	require.NoError(t, err)
	require.Empty(t, ids)
}

// TestMigrateFromV3 opens a version-3 file: statuses carry over (an
// interrupted session with an answerable request becomes suspended), the
// status accepts any state of the host's machine, grants keep what is
// read and lose the copies of the session's permissions.
func TestMigrateFromV3(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBFile), defaultBusy, false))
	require.NoError(t, err)
	require.NoError(t, migrate(ctx, db, migrations[:3]))
	_, err = db.Exec(`INSERT INTO projects (id, path, created_at, opened_at) VALUES ('p1', '/w', 1, 1);
		INSERT INTO sessions (id, project_id, status, created_at, updated_at) VALUES
			('s1', 'p1', 'interrupted', 1, 1), ('s2', 'p1', 'interrupted', 1, 1), ('s3', 'p1', 'running', 1, 1);
		INSERT INTO events (session_pk, seq, turn_id, type, data, time) VALUES (1, 1, 't1', 'turn_start', '{}', 1);
		INSERT INTO pending_requests (request_id, session_pk, kind, turn_id, seq, data, created_at)
			VALUES ('r1', 1, 'approval', 't1', 1, '{}', 1);
		INSERT INTO grants (session_pk, mode, shell_policy, allowed_commands, session_tools, updated_at)
			VALUES (1, 'plan', 'sandbox', '["ls"]', '["write_file"]', 1);`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE sessions SET status = 'queued' WHERE id = 's2'`)
	require.Error(t, err, "version 3 checks the status")
	require.NoError(t, db.Close())

	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	for id, want := range map[string]string{"s1": "suspended", "s2": "interrupted", "s3": "running"} {
		ss, err := s.Session(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, ss.Status, id)
	}
	require.NoError(t, s.SetStatus(ctx, "s2", "queued"))
	g, err := s.Grants(ctx, "s1")
	require.NoError(t, err)
	require.Equal(t, []string{"write_file"}, g.SessionTools)
	var n int
	require.NoError(t, s.rdb.QueryRow(`SELECT count(*) FROM pragma_table_info('grants') WHERE name IN ('mode', 'shell_policy', 'allowed_commands')`).Scan(&n))
	require.Zero(t, n, "permissions are stored once, on the session")
	require.NoError(t, s.IntegrityCheck(ctx))
	evs := allEvents(t, s, "s1")
	require.Len(t, evs, 1, "events kept (no cascade)")
	pend, err := s.PendingRequests(ctx, "s1")
	require.NoError(t, err)
	require.Len(t, pend, 1)
}

// TestQueueEdit: an event's QueueEdit removes, rewrites and reorders queued
// turns in the event's transaction (the order survives a reopen); an edit
// naming a turn that is not queued fails with nothing changed, the event
// included.
func TestQueueEdit(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	ss := newSession(t, s)
	for _, id := range []string{"t1", "t2", "t3", "t4"} {
		_, err := s.EnqueueTurn(ctx, ss.ID, QueuedTurn{TurnID: id, Kind: TurnStart, Input: json.RawMessage(`{"text":"` + id + `"}`)}, "")
		require.NoError(t, err)
	}
	order := func() []string {
		q, err := s.QueuedTurns(ctx, ss.ID)
		require.NoError(t, err)
		ids := []string{}
		for _, qt := range q {
			ids = append(ids, qt.TurnID)
		}
		return ids
	}
	before, err := s.QueuedTurns(ctx, ss.ID)
	require.NoError(t, err)

	// t1 was taken by the runner (not named): it stays first.
	evs, err := s.Append(ctx, ss.ID, EventInput{Type: "queue_changed", Queue: &QueueEdit{
		Remove: []string{"t3"},
		Inputs: map[string]json.RawMessage{"t2": json.RawMessage(`{"text":"two, edited"}`)},
		Order:  []string{"t4", "t2"},
	}})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, []string{"t1", "t4", "t2"}, order())

	_, err = s.Append(ctx, ss.ID, EventInput{Type: "queue_changed", Queue: &QueueEdit{Order: []string{"t2", "gone"}}})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "queue_changed", Queue: &QueueEdit{Remove: []string{"t3"}}})
	require.ErrorIs(t, err, ErrNotFound, "a removed turn is not queued")
	last, err := s.LastSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, evs[0].Seq, last, "a failed edit stores no event")
	require.NoError(t, s.Close())

	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, []string{"t1", "t4", "t2"}, order())
	q, err := s.QueuedTurns(ctx, ss.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"text":"two, edited"}`, string(q[2].Input))
	require.Equal(t, before[1].CreatedAt, q[2].CreatedAt, "a move keeps the time the turn was queued")
	require.JSONEq(t, `{"text":"t4"}`, string(q[1].Input))
}
