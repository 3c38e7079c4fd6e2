package store

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
)

// migrations[i] brings the schema from version i to i+1 (PRAGMA
// user_version). Never edit a shipped migration: append a new one.
var migrations = []string{
	// 1: the first schema.
	`
CREATE TABLE projects (
	id         TEXT PRIMARY KEY,
	path       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL,
	opened_at  INTEGER NOT NULL
);
CREATE TABLE sessions (
	pk             INTEGER PRIMARY KEY AUTOINCREMENT,
	id             TEXT NOT NULL UNIQUE,
	project_id     TEXT REFERENCES projects(id) ON DELETE CASCADE,
	title          TEXT NOT NULL DEFAULT '',
	title_source   TEXT NOT NULL DEFAULT 'auto' CHECK (title_source IN ('auto', 'user')),
	model          TEXT NOT NULL DEFAULT '',
	mode           TEXT NOT NULL DEFAULT '',
	agent          TEXT NOT NULL DEFAULT '',
	provider       TEXT NOT NULL DEFAULT '',
	status         TEXT NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'running', 'interrupted')),
	task_count     INTEGER NOT NULL DEFAULT 0,
	last_seq       INTEGER NOT NULL DEFAULT 0,
	checkpoint_seq INTEGER NOT NULL DEFAULT 0,
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL
);
CREATE INDEX sessions_by_project ON sessions(project_id, updated_at);
CREATE INDEX sessions_by_status ON sessions(status);
CREATE TABLE events (
	session_pk INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	turn_id    TEXT NOT NULL DEFAULT '',
	type       TEXT NOT NULL,
	data       TEXT NOT NULL,
	time       INTEGER NOT NULL,
	PRIMARY KEY (session_pk, seq)
) WITHOUT ROWID;
CREATE TABLE messages (
	session_pk INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	idx        INTEGER NOT NULL,
	data       TEXT NOT NULL,
	PRIMARY KEY (session_pk, idx)
) WITHOUT ROWID;
CREATE TABLE pending_requests (
	request_id   TEXT PRIMARY KEY,
	session_pk   INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	kind         TEXT NOT NULL CHECK (kind IN ('approval', 'question', 'plan', 'directory')),
	turn_id      TEXT NOT NULL DEFAULT '',
	tool_call_id TEXT NOT NULL DEFAULT '',
	seq          INTEGER NOT NULL DEFAULT 0,
	data         TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	answered     INTEGER NOT NULL DEFAULT 0,
	response     TEXT,
	answered_at  INTEGER,
	answer_note  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX pending_by_session ON pending_requests(session_pk, answered);
CREATE TABLE grants (
	session_pk       INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
	mode             TEXT NOT NULL DEFAULT '',
	shell_policy     TEXT NOT NULL DEFAULT '',
	allowed_commands TEXT NOT NULL DEFAULT '[]',
	session_tools    TEXT NOT NULL DEFAULT '[]',
	session_commands TEXT NOT NULL DEFAULT '[]',
	directories      TEXT NOT NULL DEFAULT '[]',
	updated_at       INTEGER NOT NULL
);
CREATE TABLE compaction (
	session_pk INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
	state      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE settings (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	updated_at INTEGER NOT NULL
);
`,
	// 2: per-session options, provider profiles and agent definitions.
	`
ALTER TABLE sessions ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
CREATE TABLE provider_profiles (
	name           TEXT PRIMARY KEY,
	base_url       TEXT NOT NULL DEFAULT '',
	api_mode       TEXT NOT NULL DEFAULT 'auto' CHECK (api_mode IN ('auto', 'responses', 'chat')),
	default_model  TEXT NOT NULL DEFAULT '',
	proxy          TEXT NOT NULL DEFAULT '',
	headers        TEXT NOT NULL DEFAULT '{}',
	context_window INTEGER NOT NULL DEFAULT 0,
	updated_at     INTEGER NOT NULL
);
CREATE TABLE agents (
	name        TEXT PRIMARY KEY,
	description TEXT NOT NULL DEFAULT '',
	prompt      TEXT NOT NULL DEFAULT '',
	model       TEXT NOT NULL DEFAULT '',
	builtin     INTEGER NOT NULL DEFAULT 0,
	updated_at  INTEGER NOT NULL
);
`,
	// 3: when each session tool and command grant was given; vcs becomes a
	// project setting, so the "auto" earlier builds stored on every session
	// that named none is dropped (such sessions follow their project).
	`
ALTER TABLE grants ADD COLUMN grant_times TEXT NOT NULL DEFAULT '{}';
UPDATE sessions SET settings = json_remove(settings, '$.vcs')
	WHERE json_valid(settings) AND json_extract(settings, '$.vcs') = 'auto';
`,
	// 4: the session host's turn state machine is stored whole: status loses
	// its CHECK (the host checks transitions; a new state needs no table
	// rebuild) and an interrupted session with answerable requests becomes
	// suspended. A durable turn queue. Mode, shell policy and allowed
	// commands live on the session only: grants stop keeping a copy.
	`
ALTER TABLE sessions ADD COLUMN state TEXT NOT NULL DEFAULT 'idle';
UPDATE sessions SET state = CASE
	WHEN status = 'interrupted' AND EXISTS (SELECT 1 FROM pending_requests p
		WHERE p.session_pk = sessions.pk AND p.answered = 0) THEN 'suspended'
	ELSE status END;
DROP INDEX sessions_by_status;
ALTER TABLE sessions DROP COLUMN status;
ALTER TABLE sessions RENAME COLUMN state TO status;
CREATE INDEX sessions_by_status ON sessions(status);
CREATE TABLE turn_queue (
	pk         INTEGER PRIMARY KEY AUTOINCREMENT,
	session_pk INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	turn_id    TEXT NOT NULL UNIQUE,
	kind       TEXT NOT NULL,
	from_turn  TEXT NOT NULL DEFAULT '',
	input      TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL
);
CREATE INDEX turn_queue_by_session ON turn_queue(session_pk, pk);
ALTER TABLE grants DROP COLUMN mode;
ALTER TABLE grants DROP COLUMN shell_policy;
ALTER TABLE grants DROP COLUMN allowed_commands;
`,
	// 5: a provider profile's retry and timeout overrides (JSON object;
	// absent members follow the environment).
	`
ALTER TABLE provider_profiles ADD COLUMN retry TEXT NOT NULL DEFAULT '{}';
`,
	// 6: a session's usage totals (JSON; '' = none yet) with the count
	// that orders them, and a provider profile's prices per model (JSON
	// object).
	`
ALTER TABLE sessions ADD COLUMN usage TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN usage_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE provider_profiles ADD COLUMN prices TEXT NOT NULL DEFAULT '{}';
`,
	// 7: session.fork. A fork names the session and turn it was made from;
	// turn_marks keeps, per finished turn, how many history messages its
	// turn_end's checkpoint held (the history up to and including that
	// turn) while that prefix stays as it was. A session at rest gets the
	// mark of its last finished turn: its stored history is that turn's.
	`
ALTER TABLE sessions ADD COLUMN forked_from TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN forked_turn TEXT NOT NULL DEFAULT '';
CREATE TABLE turn_marks (
	session_pk INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	turn_id    TEXT NOT NULL,
	messages   INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	PRIMARY KEY (session_pk, turn_id)
) WITHOUT ROWID;
INSERT INTO turn_marks (session_pk, turn_id, messages, seq)
	SELECT s.pk, e.turn_id, (SELECT count(*) FROM messages m WHERE m.session_pk = s.pk), e.seq
	FROM sessions s JOIN events e ON e.session_pk = s.pk
	WHERE s.status IN ('idle', 'interrupted', 'queued') AND e.type = 'turn_end' AND e.turn_id != ''
		AND e.seq = (SELECT max(seq) FROM events x WHERE x.session_pk = s.pk AND x.type = 'turn_end');
`,
	// 8: sessions at scale (sessionlist.go): an archived flag, the list's
	// keyset index (project, archived, updated_at; the rowid pk ends it),
	// and session_text, a full-text index of titles and message text that
	// triggers keep current wherever sessions and messages are written,
	// filled here from the sessions that exist.
	sessionTextMigration,
	// 9: pending_requests.kind loses its CHECK (the store checks kinds, as
	// it does statuses since 4): MCP elicitations are a new kind, and the
	// next one needs no table rebuild.
	`
CREATE TABLE pending_requests_new (
	request_id   TEXT PRIMARY KEY,
	session_pk   INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	kind         TEXT NOT NULL,
	turn_id      TEXT NOT NULL DEFAULT '',
	tool_call_id TEXT NOT NULL DEFAULT '',
	seq          INTEGER NOT NULL DEFAULT 0,
	data         TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	answered     INTEGER NOT NULL DEFAULT 0,
	response     TEXT,
	answered_at  INTEGER,
	answer_note  TEXT NOT NULL DEFAULT ''
);
INSERT INTO pending_requests_new (request_id, session_pk, kind, turn_id, tool_call_id, seq, data, created_at, answered, response, answered_at, answer_note)
	SELECT request_id, session_pk, kind, turn_id, tool_call_id, seq, data, created_at, answered, response, answered_at, answer_note FROM pending_requests;
DROP TABLE pending_requests;
ALTER TABLE pending_requests_new RENAME TO pending_requests;
CREATE INDEX pending_by_session ON pending_requests(session_pk, answered);
`,
	// 10: a session's rewind in progress (session.rewind with files): the
	// row is written before the workspace is restored and deleted in the
	// transaction of the session_rewound event, so one left after a crash
	// says a file restore was interrupted.
	`
CREATE TABLE rewind_intents (
	session_pk INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
	to_turn_id TEXT NOT NULL,
	data       TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL
);
`,
	// 11: the last seq an import wrote (ImportSession): the turns up to it
	// came without their snapshots, so session.rewind refuses to rewind
	// the files to before them.
	`ALTER TABLE sessions ADD COLUMN imported_seq INTEGER NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// schemaSQL is the schema the migrations build, as SQLite keeps it
// (sqlite_master's statements in creation order), at version
// len(migrations). A new database is created from it in one transaction:
// replaying the migrations (table rebuilds, dropped and renamed columns,
// each parsed and committed on its own) was 10 of the 11 ms a first start
// spends opening the store. TestFreshSchemaIsTheMigratedSchema keeps it
// equal to what the migrations build (UPDATE_SCHEMA=1 rewrites it).
//
//go:embed schema.sql
var schemaSQL string

// migrate applies the migrations the database lacks, one transaction each
// (the version bump commits with its DDL); an empty database at version 0
// gets schemaSQL instead when ms is the whole chain. It refuses a database
// whose version is above len(ms).
func migrate(ctx context.Context, db *sql.DB, ms []string) error {
	if len(ms) == len(migrations) {
		if done, err := createFresh(ctx, db); err != nil || done {
			return err
		}
	}
	for {
		done, err := migrateOne(ctx, db, ms)
		if err != nil || done {
			return err
		}
	}
}

// createFresh creates the whole schema in an empty database at version 0,
// reporting whether it did (false: the database has a schema to migrate).
func createFresh(ctx context.Context, db *sql.DB) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (writer DSN)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil || !done {
			tx.Rollback()
		}
	}()
	var v, objects int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, err
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&objects); err != nil {
		return false, err
	}
	if v != 0 || objects != 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return false, fmt.Errorf("create schema: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return false, fmt.Errorf("create schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("create schema: %w", err)
	}
	return true, nil
}

// migrateOne applies the next migration, reporting done when none is left.
func migrateOne(ctx context.Context, db *sql.DB, ms []string) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (writer DSN): versions cannot race
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil || done {
			tx.Rollback()
		}
	}()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, err
	}
	switch {
	case v > len(ms):
		return false, fmt.Errorf("%w: file has version %d, this build knows up to %d", ErrNewerSchema, v, len(ms))
	case v == len(ms):
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, ms[v]); err != nil {
		return false, fmt.Errorf("to version %d: %w", v+1, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, fmt.Errorf("to version %d: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("to version %d: %w", v+1, err)
	}
	return false, nil
}
