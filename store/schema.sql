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
	task_count     INTEGER NOT NULL DEFAULT 0,
	last_seq       INTEGER NOT NULL DEFAULT 0,
	checkpoint_seq INTEGER NOT NULL DEFAULT 0,
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL
, settings TEXT NOT NULL DEFAULT '{}', status TEXT NOT NULL DEFAULT 'idle', usage TEXT NOT NULL DEFAULT '', usage_seq INTEGER NOT NULL DEFAULT 0, forked_from TEXT NOT NULL DEFAULT '', forked_turn TEXT NOT NULL DEFAULT '', archived INTEGER NOT NULL DEFAULT 0, imported_seq INTEGER NOT NULL DEFAULT 0);
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
CREATE TABLE grants (
	session_pk       INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
	session_tools    TEXT NOT NULL DEFAULT '[]',
	session_commands TEXT NOT NULL DEFAULT '[]',
	directories      TEXT NOT NULL DEFAULT '[]',
	updated_at       INTEGER NOT NULL
, grant_times TEXT NOT NULL DEFAULT '{}');
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
CREATE TABLE provider_profiles (
	name           TEXT PRIMARY KEY,
	base_url       TEXT NOT NULL DEFAULT '',
	api_mode       TEXT NOT NULL DEFAULT 'auto' CHECK (api_mode IN ('auto', 'responses', 'chat')),
	default_model  TEXT NOT NULL DEFAULT '',
	proxy          TEXT NOT NULL DEFAULT '',
	headers        TEXT NOT NULL DEFAULT '{}',
	context_window INTEGER NOT NULL DEFAULT 0,
	updated_at     INTEGER NOT NULL
, retry TEXT NOT NULL DEFAULT '{}', prices TEXT NOT NULL DEFAULT '{}');
CREATE TABLE agents (
	name        TEXT PRIMARY KEY,
	description TEXT NOT NULL DEFAULT '',
	prompt      TEXT NOT NULL DEFAULT '',
	model       TEXT NOT NULL DEFAULT '',
	builtin     INTEGER NOT NULL DEFAULT 0,
	updated_at  INTEGER NOT NULL
);
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
CREATE TABLE turn_marks (
	session_pk INTEGER NOT NULL REFERENCES sessions(pk) ON DELETE CASCADE,
	turn_id    TEXT NOT NULL,
	messages   INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	PRIMARY KEY (session_pk, turn_id)
) WITHOUT ROWID;
CREATE INDEX sessions_by_project ON sessions(project_id, archived, updated_at);
CREATE VIRTUAL TABLE session_text USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER session_text_title_insert AFTER INSERT ON sessions WHEN new.title <> '' BEGIN
	INSERT INTO session_text(rowid, text) VALUES (new.pk * 16777216, new.title);
END;
CREATE TRIGGER session_text_title_update AFTER UPDATE OF title ON sessions WHEN new.title IS NOT old.title BEGIN
	DELETE FROM session_text WHERE rowid = old.pk * 16777216;
	INSERT INTO session_text(rowid, text) SELECT new.pk * 16777216, new.title WHERE new.title <> '';
END;
CREATE TRIGGER session_text_session_delete AFTER DELETE ON sessions BEGIN
	DELETE FROM session_text WHERE rowid BETWEEN old.pk * 16777216 AND old.pk * 16777216 + 16777215;
END;
CREATE TRIGGER session_text_message_insert AFTER INSERT ON messages BEGIN
	DELETE FROM session_text WHERE rowid = new.session_pk * 16777216 + new.idx + 1;
	INSERT INTO session_text(rowid, text)
		SELECT new.session_pk * 16777216 + new.idx + 1, c FROM (SELECT CASE
			WHEN new.idx BETWEEN 0 AND 16777214 AND new.data NOT GLOB '{"role":"tool"*' AND json_valid(new.data)
				AND json_extract(new.data, '$.role') IN ('user', 'assistant')
			THEN json_extract(new.data, '$.content') END AS c)
		WHERE typeof(c) = 'text' AND c <> '';
END;
CREATE TRIGGER session_text_message_update AFTER UPDATE ON messages BEGIN
	DELETE FROM session_text WHERE rowid = old.session_pk * 16777216 + old.idx + 1;
	INSERT INTO session_text(rowid, text)
		SELECT new.session_pk * 16777216 + new.idx + 1, c FROM (SELECT CASE
			WHEN new.idx BETWEEN 0 AND 16777214 AND json_valid(new.data)
				AND json_extract(new.data, '$.role') IN ('user', 'assistant')
			THEN json_extract(new.data, '$.content') END AS c)
		WHERE typeof(c) = 'text' AND c <> '';
END;
CREATE TRIGGER session_text_message_delete AFTER DELETE ON messages BEGIN
	DELETE FROM session_text WHERE rowid = old.session_pk * 16777216 + old.idx + 1;
END;
CREATE TABLE "pending_requests" (
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
CREATE INDEX pending_by_session ON pending_requests(session_pk, answered);
CREATE TABLE rewind_intents (
	session_pk INTEGER PRIMARY KEY REFERENCES sessions(pk) ON DELETE CASCADE,
	to_turn_id TEXT NOT NULL,
	data       TEXT NOT NULL DEFAULT '{}',
	created_at INTEGER NOT NULL
);
