package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMigrateFromV1 builds a version-1 file with the first migration only,
// fills it, and opens it with the current code.
func TestMigrateFromV1(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	path := filepath.Join(dir, DBFile)
	db, err := sql.Open("sqlite", dsn(path, defaultBusy, false))
	require.NoError(t, err)
	require.NoError(t, migrate(ctx, db, migrations[:1]))
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	require.Equal(t, 1, v)
	_, err = db.Exec(`INSERT INTO projects (id, path, created_at, opened_at) VALUES ('p1', '/w', 1, 1);
		INSERT INTO sessions (id, project_id, title, status, last_seq, created_at, updated_at)
			VALUES ('s1', 'p1', 'old', 'running', 2, 1, 1);
		INSERT INTO events (session_pk, seq, turn_id, type, data, time) VALUES
			(1, 1, 't1', 'turn_start', '{"taskId":"t1"}', 1),
			(1, 2, 't1', 'permission_required', '{"taskId":"t1","requestId":"r1"}', 2);
		INSERT INTO pending_requests (request_id, session_pk, kind, turn_id, seq, data, created_at)
			VALUES ('r1', 1, 'approval', 't1', 2, '{}', 2);`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.rdb.QueryRow("PRAGMA user_version").Scan(&v))
	require.Equal(t, SchemaVersion(), v)

	ss, err := s.Session(ctx, "s1")
	require.NoError(t, err)
	require.Equal(t, "old", ss.Title)
	require.JSONEq(t, `{}`, string(ss.Settings), "column added by v2 has its default")
	evs, err := s.Append(ctx, "s1", EventInput{TurnID: "t1", Type: "assistant_delta"})
	require.NoError(t, err)
	require.Equal(t, int64(3), evs[0].Seq, "seq continues after migration")
	pend, err := s.PendingRequests(ctx, "s1")
	require.NoError(t, err)
	require.Len(t, pend, 1)
	require.NoError(t, s.PutAgent(ctx, AgentDef{Name: "a"}), "table added by v2")
	_, err = s.UpdateSession(ctx, "s1", func(ss *Session) { ss.Settings = json.RawMessage(`{"x":1}`) })
	require.NoError(t, err)
}

func TestRefuseNewerSchema(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	require.NoError(t, s.submitRaw(ctx, func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, "PRAGMA user_version = 99")
		return err
	}))
	require.NoError(t, s.Close())
	_, err = Open(ctx, dir, Options{})
	require.ErrorIs(t, err, ErrNewerSchema)
	require.Contains(t, err.Error(), filepath.Join(dir, DBFile))
	require.Contains(t, err.Error(), "99")
}

func TestRefuseCorruptFile(t *testing.T) {
	ctx := ctxT(t)
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		junk := make([]byte, 8192)
		for i := range junk {
			junk[i] = byte(i * 7)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, DBFile), junk, 0o600))
		_, err := Open(ctx, dir, Options{})
		require.ErrorIs(t, err, ErrCorrupt)
		require.Contains(t, err.Error(), filepath.Join(dir, DBFile))
	})
	t.Run("damaged pages", func(t *testing.T) {
		dir := t.TempDir()
		s, err := Open(ctx, dir, Options{})
		require.NoError(t, err)
		ss := newSession(t, s)
		for range 300 {
			_, err := s.Append(ctx, ss.ID, EventInput{Type: "assistant_delta", Data: json.RawMessage(`{"text":"lorem ipsum dolor sit amet"}`)})
			require.NoError(t, err)
		}
		require.NoError(t, s.Vacuum(ctx)) // everything in the main file, WAL truncated
		require.NoError(t, s.Close())
		path := filepath.Join(dir, DBFile)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Greater(t, len(b), 4*4096)
		for i := 4096 + 100; i < len(b)-100; i += 4096 { // scribble over every page but the header page
			copy(b[i:i+64], []byte("################################################################"))
		}
		require.NoError(t, os.WriteFile(path, b, 0o600))
		_, err = Open(ctx, dir, Options{})
		require.ErrorIs(t, err, ErrCorrupt)
		require.Contains(t, err.Error(), path)
	})
}

// TestMigrateV2ToV3: grants get their times column (old grants have none),
// and the vcs "auto" earlier builds stored on every session is dropped, an
// explicit other mode kept.
func TestMigrateV2ToV3(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBFile), defaultBusy, false))
	require.NoError(t, err)
	require.NoError(t, migrate(ctx, db, migrations[:2]))
	_, err = db.Exec(`INSERT INTO projects (id, path, created_at, opened_at) VALUES ('p1', '/w', 1, 1);
		INSERT INTO sessions (id, project_id, title, status, last_seq, created_at, updated_at, settings) VALUES
			('s1', 'p1', 'a', 'idle', 0, 1, 1, '{"vcs":"auto","shellPolicy":"approve"}'),
			('s2', 'p1', 'b', 'idle', 0, 1, 1, '{"vcs":"off"}'),
			('s3', 'p1', 'c', 'idle', 0, 1, 1, 'not json');
		INSERT INTO grants (session_pk, session_tools, updated_at) VALUES (1, '["write_file"]', 1);`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	for id, want := range map[string]string{"s1": `{"shellPolicy":"approve"}`, "s2": `{"vcs":"off"}`} {
		ss, err := s.Session(ctx, id)
		require.NoError(t, err)
		require.JSONEq(t, want, string(ss.Settings), id)
	}
	g, err := s.Grants(ctx, "s1")
	require.NoError(t, err)
	require.Equal(t, []string{"write_file"}, g.SessionTools)
	require.Empty(t, g.GrantTimes.Tools)
}
