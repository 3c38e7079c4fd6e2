package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// ExportView is a session as one read transaction sees it (session.export):
// its row, history, compaction state, how many turns wait in its queue and
// how many requests are unanswered, and its event log.
type ExportView struct {
	Session    Session
	Messages   []llm.Message
	Compaction json.RawMessage // nil: none
	Queued     int
	Pending    int
	// Events yields the event log in seq order, read in the same
	// transaction; it is valid only while the callback runs.
	Events iter.Seq2[Event, error]
}

// exportPage is how many events ReadForExport reads at a time.
const exportPage = 1000

// ReadForExport calls fn with the session as one read transaction sees it:
// the row, the history, the log and the counts all agree with each other
// whatever commits meanwhile.
func (s *Store) ReadForExport(ctx context.Context, id string, fn func(ExportView) error) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read for export: %w", err)
	}
	defer tx.Rollback() // read only: nothing to commit
	var v ExportView
	v.Session, err = scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
	if err != nil {
		return fmt.Errorf("read for export: %w", notFound(err, "session", id))
	}
	pk, err := sessionPK(ctx, tx, id)
	if err != nil {
		return fmt.Errorf("read for export: %w", err)
	}
	if v.Messages, err = messages(ctx, tx, pk); err != nil {
		return fmt.Errorf("read for export: %w", err)
	}
	var state []byte
	err = tx.QueryRowContext(ctx, "SELECT state FROM compaction WHERE session_pk = ?", pk).Scan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read for export: compaction: %w", err)
	default:
		v.Compaction = state
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM turn_queue WHERE session_pk = ?", pk).Scan(&v.Queued); err != nil {
		return fmt.Errorf("read for export: queue: %w", err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pending_requests WHERE session_pk = ? AND answered = 0", pk).Scan(&v.Pending); err != nil {
		return fmt.Errorf("read for export: requests: %w", err)
	}
	v.Events = func(yield func(Event, error) bool) {
		var after int64
		for {
			page, err := eventPage(ctx, tx, id, pk, after)
			if err != nil {
				yield(Event{}, fmt.Errorf("read for export: %w", err))
				return
			}
			for _, e := range page {
				if !yield(e, nil) {
					return
				}
				after = e.Seq
			}
			if len(page) < exportPage {
				return
			}
		}
	}
	return fn(v)
}

func eventPage(ctx context.Context, q queryer, id string, pk, after int64) ([]Event, error) {
	rows, err := q.QueryContext(ctx,
		"SELECT seq, turn_id, type, data, time FROM events WHERE session_pk = ? AND seq > ? ORDER BY seq LIMIT ?",
		pk, after, exportPage)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e := Event{SessionID: id}
		var data []byte
		var ms int64
		if err := rows.Scan(&e.Seq, &e.TurnID, &e.Type, &data, &ms); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		e.Data, e.Time = json.RawMessage(data), time.UnixMilli(ms).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}

// ImportInput is a session to import (session.import).
type ImportInput struct {
	// Session is the new session's row: ProjectID, Title, TitleSource,
	// Model, Mode, Agent, Provider, TaskCount, Settings and Usage are
	// taken; it gets a new id and the idle status.
	Session Session
	// Events is the log, in order: event i gets seq i+1 (their SessionID
	// and Seq are not read).
	Events []Event
	// History is the checkpointed history (written as the checkpoint of
	// the last event).
	History []llm.Message
	// Compaction is the compaction state (nil: none).
	Compaction json.RawMessage
	// Mark, when set, is the mark of the finished turn whose history
	// History is (Seq: its turn_end's place in Events, from 1).
	Mark *TurnMark
	// Files, when not "", is a folder ImportDir made, which becomes the
	// session's folder (its attachments): it is moved into place before
	// the rows commit and removed when they do not.
	Files string
}

// importPrefix starts the names of ImportDir's folders: names no session
// has, which sweepOrphanDirs removes at the next Open when a crash left one.
const importPrefix = "import-"

// ImportDir makes an empty folder under <dir>/sessions for an import's
// files (on the sessions' file system, so ImportSession moves it in one
// rename). The caller removes it when the import does not happen; one a
// crash leaves is removed by the next Open.
func (s *Store) ImportDir() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("import dir: %w", err)
	}
	parent := filepath.Join(s.dir, sessionsDir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("import dir: %w", err)
	}
	dir := filepath.Join(parent, importPrefix+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("import dir: %w", err)
	}
	return dir, nil
}

// ImportSession stores a new session with the given log, history and
// compaction state in one transaction: the session is there whole or not
// at all. Its files (in.Files) are moved into its folder before the
// commit and removed when the commit fails; a crash in between leaves a
// folder without a session, which the next Open removes.
func (s *Store) ImportSession(ctx context.Context, in ImportInput) (Session, error) {
	ss := in.Session
	ss.ID, ss.Status = newID(), StatusIdle
	if err := normalizeSession(&ss); err != nil {
		return Session{}, fmt.Errorf("import session: %w", err)
	}
	for i, e := range in.Events {
		if e.Type == "" || !json.Valid(e.Data) {
			return Session{}, fmt.Errorf("import session: %w: event %d has no type or its data is not JSON", ErrInvalid, i+1)
		}
	}
	if m := in.Mark; m != nil && (m.TurnID == "" || m.Seq < 1 || m.Seq > int64(len(in.Events)) || m.Messages < 0 || m.Messages > len(in.History)) {
		return Session{}, fmt.Errorf("import session: %w: turn mark %+v", ErrInvalid, *m)
	}
	if len(in.Compaction) > 0 && !json.Valid(in.Compaction) {
		return Session{}, fmt.Errorf("import session: %w: compaction state is not JSON", ErrInvalid)
	}
	if len(ss.Usage) > 0 && !json.Valid(ss.Usage) {
		return Session{}, fmt.Errorf("import session: %w: usage is not JSON", ErrInvalid)
	}
	hist, err := marshalHistory(in.History)
	if err != nil {
		return Session{}, fmt.Errorf("import session: %w", err)
	}
	dir := s.SessionDir(ss.ID)
	if in.Files != "" {
		if filepath.Dir(in.Files) != filepath.Join(s.dir, sessionsDir) {
			return Session{}, fmt.Errorf("import session: %w: files %s are not an import folder", ErrInvalid, in.Files)
		}
		if err := os.Rename(in.Files, dir); err != nil {
			return Session{}, fmt.Errorf("import session: %w", err)
		}
	}
	var out Session
	n := int64(len(in.Events))
	var usage any
	if len(ss.Usage) > 0 {
		usage = string(ss.Usage)
	}
	// Once queued, the write may commit even if ctx ends: wait for it, so
	// the files are removed only when the rows really are not there.
	err = s.write(context.WithoutCancel(ctx), func(t *wtx) error {
		var np int
		if err := t.queryRow("SELECT count(*) FROM projects WHERE id = ?", ss.ProjectID).Scan(&np); err != nil {
			return err
		}
		if np == 0 {
			return refuse(fmt.Errorf("project %q: %w", ss.ProjectID, ErrNotFound))
		}
		now := t.nowMS()
		res, err := t.exec(`INSERT INTO sessions (id, project_id, title, title_source, model, mode,
			agent, provider, status, task_count, last_seq, checkpoint_seq, created_at, updated_at, settings, usage, usage_seq, imported_seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, ''), ?, ?)`,
			ss.ID, ss.ProjectID, ss.Title, ss.TitleSource, ss.Model, ss.Mode, ss.Agent, ss.Provider, ss.Status,
			ss.TaskCount, n, n, now, now, string(ss.Settings), usage, n, n)
		if err != nil {
			return err
		}
		pk, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for i, e := range in.Events {
			if _, err := t.w.st.insEvent.ExecContext(t.ctx, pk, i+1, e.TurnID, e.Type, string(e.Data), e.Time.UnixMilli()); err != nil {
				return fmt.Errorf("insert event %d: %w", i+1, err)
			}
		}
		for i, b := range hist {
			if _, err := t.w.st.putMessage.ExecContext(t.ctx, pk, i, string(b)); err != nil {
				return fmt.Errorf("history message %d: %w", i, err)
			}
		}
		if m := in.Mark; m != nil {
			if _, err := t.exec("INSERT INTO turn_marks (session_pk, turn_id, messages, seq) VALUES (?, ?, ?, ?)",
				pk, m.TurnID, m.Messages, m.Seq); err != nil {
				return err
			}
		}
		if len(in.Compaction) > 0 {
			if _, err := t.exec("INSERT INTO compaction (session_pk, state, updated_at) VALUES (?, ?, ?)",
				pk, string(in.Compaction), now); err != nil {
				return err
			}
		}
		t.forgetCache(ss.ID)
		out, err = scanSession(t.queryRow("SELECT "+sessionCols+" FROM sessions WHERE pk = ?", pk))
		return err
	})
	if err != nil {
		if in.Files != "" {
			_ = os.RemoveAll(dir)
		}
		return Session{}, fmt.Errorf("import session: %w", err)
	}
	return out, nil
}
