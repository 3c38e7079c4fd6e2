package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// sessionsDir is the folder under the data directory that holds one folder
// per session (attachments, spilled tool results).
const sessionsDir = "sessions"

// Session is one conversation of a project.
type Session struct {
	ID          string    `json:"id"`
	ProjectID   string    `json:"projectId"`
	Title       string    `json:"title"`
	TitleSource string    `json:"titleSource"` // auto | user
	Model       string    `json:"model"`
	Mode        string    `json:"mode"`
	Agent       string    `json:"agent"`
	Provider    string    `json:"provider"`
	Status      string    `json:"status"` // idle | running | interrupted
	TaskCount   int       `json:"taskCount"`
	LastSeq     int64     `json:"lastSeq"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Settings holds free-form per-session options (allowedCommands,
	// shellPolicy, approvalTimeoutMs, ...) as a JSON object.
	Settings json.RawMessage `json:"settings"`
	// Usage is the session's usage totals as the host last recorded them
	// with an event (EventInput.Usage), a JSON value; nil before any.
	Usage json.RawMessage `json:"usage,omitempty"`
	// ForkedFrom and ForkedTurn name the session and turn a fork was made
	// from (ForkSession); empty for other sessions.
	ForkedFrom string `json:"forkedFrom,omitempty"`
	ForkedTurn string `json:"forkedTurn,omitempty"`
	// ImportedSeq is the last seq an import (ImportSession) wrote: the
	// turns up to it came with the file, without their snapshots; 0 for a
	// session that was not imported.
	ImportedSeq int64 `json:"importedSeq,omitempty"`
	// Archived hides the session from lists that do not ask for archived
	// sessions (SetArchived; sessionlist.go).
	Archived bool `json:"archived"`
}

const sessionCols = `id, COALESCE(project_id, ''), title, title_source, model, mode, agent, provider,
	status, task_count, last_seq, created_at, updated_at, settings, usage, forked_from, forked_turn, archived, imported_seq`

func scanSession(r scanner) (Session, error) {
	var ss Session
	var created, updated int64
	var settings, usage []byte
	if err := r.Scan(&ss.ID, &ss.ProjectID, &ss.Title, &ss.TitleSource, &ss.Model, &ss.Mode, &ss.Agent,
		&ss.Provider, &ss.Status, &ss.TaskCount, &ss.LastSeq, &created, &updated, &settings, &usage,
		&ss.ForkedFrom, &ss.ForkedTurn, &ss.Archived, &ss.ImportedSeq); err != nil {
		return Session{}, err
	}
	if len(usage) > 0 {
		ss.Usage = json.RawMessage(usage)
	}
	ss.CreatedAt, ss.UpdatedAt = fromMS(created), fromMS(updated)
	ss.Settings = json.RawMessage(settings)
	return ss, nil
}

// validID reports whether id is safe as a directory name.
func validID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

func normalizeSession(ss *Session) error {
	if ss.TitleSource == "" {
		ss.TitleSource = "auto"
	}
	if ss.TitleSource != "auto" && ss.TitleSource != "user" {
		return fmt.Errorf("%w: title source %q", ErrInvalid, ss.TitleSource)
	}
	if ss.Status == "" {
		ss.Status = StatusIdle
	}
	if !validStatus(ss.Status) {
		return fmt.Errorf("%w: status %q", ErrInvalid, ss.Status)
	}
	if len(ss.Settings) == 0 {
		ss.Settings = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(ss.Settings, &obj); err != nil || obj == nil {
		return fmt.Errorf("%w: session settings must be a JSON object", ErrInvalid)
	}
	return nil
}

// CreateSession stores a new session (an ID is generated when empty) and
// returns it as stored.
func (s *Store) CreateSession(ctx context.Context, ss Session) (Session, error) {
	if ss.ID == "" {
		ss.ID = newID()
	}
	if !validID(ss.ID) {
		return Session{}, fmt.Errorf("create session: %w: id %q", ErrInvalid, ss.ID)
	}
	if err := normalizeSession(&ss); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	var out Session
	err := s.write(ctx, func(t *wtx) error {
		var project any
		if ss.ProjectID != "" {
			var n int
			if err := t.queryRow("SELECT count(*) FROM projects WHERE id = ?", ss.ProjectID).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return refuse(fmt.Errorf("project %q: %w", ss.ProjectID, ErrNotFound))
			}
			project = ss.ProjectID
		}
		now := t.nowMS()
		if _, err := t.exec(`INSERT INTO sessions (id, project_id, title, title_source, model, mode,
			agent, provider, status, task_count, created_at, updated_at, settings)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ss.ID, project, ss.Title, ss.TitleSource, ss.Model, ss.Mode, ss.Agent, ss.Provider, ss.Status,
			ss.TaskCount, now, now, string(ss.Settings)); err != nil {
			return err
		}
		t.forgetCache(ss.ID)
		var err error
		out, err = scanSession(t.queryRow("SELECT "+sessionCols+" FROM sessions WHERE id = ?", ss.ID))
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	return out, nil
}

// Session returns a session by id.
func (s *Store) Session(ctx context.Context, id string) (Session, error) {
	ss, err := scanSession(s.rdb.QueryRowContext(ctx, "SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
	if err != nil {
		return Session{}, fmt.Errorf("session: %w", notFound(err, "session", id))
	}
	return ss, nil
}

// Sessions returns the sessions of a project ("" = all), most recently
// updated first.
func (s *Store) Sessions(ctx context.Context, projectID string) ([]Session, error) {
	q := "SELECT " + sessionCols + " FROM sessions"
	var args []any
	if projectID != "" {
		q += " WHERE project_id = ?"
		args = append(args, projectID)
	}
	rows, err := s.rdb.QueryContext(ctx, q+" ORDER BY updated_at DESC, pk DESC", args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		out = append(out, ss)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	return out, nil
}

// UpdateSession changes a session through fn and returns it as stored. fn
// may change Title, TitleSource, Model, Mode, Agent, Provider, Status,
// TaskCount and Settings; other fields are ignored. fn runs on the writer
// goroutine, possibly more than once: keep it a pure, fast edit that does
// not call the Store.
func (s *Store) UpdateSession(ctx context.Context, id string, fn func(*Session)) (Session, error) {
	var out Session
	err := s.write(ctx, func(t *wtx) error {
		cur, err := scanSession(t.queryRow("SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
		if err != nil {
			return refuse(notFound(err, "session", id))
		}
		if st := t.touched[id]; st != nil {
			cur.LastSeq = st.lastSeq // not yet flushed in this batch
		}
		next := cur
		fn(&next)
		if err := normalizeSession(&next); err != nil {
			return refuse(err)
		}
		now := t.nowMS()
		if _, err := t.exec(`UPDATE sessions SET title = ?, title_source = ?, model = ?, mode = ?,
			agent = ?, provider = ?, status = ?, task_count = ?, settings = ?, updated_at = ? WHERE id = ?`,
			next.Title, next.TitleSource, next.Model, next.Mode, next.Agent, next.Provider, next.Status,
			next.TaskCount, string(next.Settings), now, id); err != nil {
			return err
		}
		out = cur
		out.Title, out.TitleSource, out.Model, out.Mode = next.Title, next.TitleSource, next.Model, next.Mode
		out.Agent, out.Provider, out.Status, out.TaskCount = next.Agent, next.Provider, next.Status, next.TaskCount
		out.Settings, out.UpdatedAt = next.Settings, fromMS(now)
		return nil
	})
	if err != nil {
		return Session{}, fmt.Errorf("update session: %w", err)
	}
	return out, nil
}

// DeleteSession removes a session's rows (events, history, requests,
// grants, compaction state) and then its folder (attachments, tool
// results).
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	err := s.write(ctx, func(t *wtx) error {
		res, err := t.exec("DELETE FROM sessions WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("session %q: %w", id, ErrNotFound)
		}
		t.forget(id)
		return nil
	})
	s.hist.forget(id)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if validID(id) {
		if err := os.RemoveAll(s.SessionDir(id)); err != nil {
			return fmt.Errorf("delete session %q files: %w", id, err)
		}
	}
	return nil
}

// SessionDir returns the session's folder, <dir>/sessions/<id> (it may not
// exist yet). Callers create it when they store files.
func (s *Store) SessionDir(id string) string {
	return filepath.Join(s.dir, sessionsDir, filepath.Base(id))
}

// sweepOrphanDirs removes session folders whose session is gone (a crash
// between DeleteSession's commit and its file removal).
func (s *Store) sweepOrphanDirs(ctx context.Context) error {
	entries, err := os.ReadDir(filepath.Join(s.dir, sessionsDir))
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		var n int
		err := s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", e.Name()).Scan(&n)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if n == 0 {
			errs = append(errs, os.RemoveAll(filepath.Join(s.dir, sessionsDir, e.Name())))
		}
	}
	return errors.Join(errs...)
}
