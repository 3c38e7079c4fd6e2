package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/llm"
)

// A turn mark says where a finished turn's history ends: the first
// Messages messages of the stored history are the history up to and
// including the turn, as its turn_end left it (EventInput.MarkTurn). A
// checkpoint that rewrites a message before a mark's end (a compaction) or
// cuts the history shorter (a rewind) drops the marks it spoils: what is
// left of them is no longer that turn's history.

// TurnMark is a finished turn's place in its session's history.
type TurnMark struct {
	TurnID string
	// Messages is how many history messages (system prompt included) are
	// the history up to and including the turn.
	Messages int
	// Seq is the seq of the turn's turn_end.
	Seq int64
}

// TurnFacts is what the log says of one turn of a session.
type TurnFacts struct {
	Started bool // a turn_start is stored
	Ended   bool // a turn_end is stored
	// Mark is the turn's mark; nil when it has none (not ended, or its
	// history was rewritten since).
	Mark *TurnMark
}

// markTurn records turnID's mark: the history as stored after event seq.
func (t *wtx) markTurn(st *sessState, seq int64, turnID string) error {
	n := len(st.hashes)
	if !st.hashesKnown {
		if err := t.queryRow("SELECT count(*) FROM messages WHERE session_pk = ?", st.pk).Scan(&n); err != nil {
			return fmt.Errorf("mark turn: %w", err)
		}
	}
	if _, err := t.exec("INSERT OR REPLACE INTO turn_marks (session_pk, turn_id, messages, seq) VALUES (?, ?, ?, ?)",
		st.pk, turnID, n, seq); err != nil {
		return fmt.Errorf("mark turn: %w", err)
	}
	return nil
}

// dropTurnMarks drops the marks a checkpoint spoiled: those that end after
// the first kept messages.
func (t *wtx) dropTurnMarks(st *sessState, kept int) error {
	if _, err := t.exec("DELETE FROM turn_marks WHERE session_pk = ? AND messages > ?", st.pk, kept); err != nil {
		return fmt.Errorf("drop turn marks: %w", err)
	}
	return nil
}

// isSystem reports whether an encoded history message is the system
// prompt (llm.Message encodes its role first).
func isSystem(b []byte) bool { return bytes.HasPrefix(b, []byte(`{"role":"system"`)) }

// Turn returns what the log says of a session's turn.
func (s *Store) Turn(ctx context.Context, sessionID, turnID string) (TurnFacts, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return TurnFacts{}, fmt.Errorf("turn: %w", err)
	}
	var f TurnFacts
	err = s.rdb.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM events WHERE session_pk = ?1 AND turn_id = ?2 AND type = 'turn_start'),
		EXISTS (SELECT 1 FROM events WHERE session_pk = ?1 AND turn_id = ?2 AND type = 'turn_end')`,
		pk, turnID).Scan(&f.Started, &f.Ended)
	if err != nil {
		return TurnFacts{}, fmt.Errorf("turn: %w", err)
	}
	m := TurnMark{TurnID: turnID}
	err = s.rdb.QueryRowContext(ctx, "SELECT messages, seq FROM turn_marks WHERE session_pk = ? AND turn_id = ?", pk, turnID).
		Scan(&m.Messages, &m.Seq)
	switch {
	case err == nil:
		f.Mark = &m
	case !errors.Is(err, sql.ErrNoRows):
		return TurnFacts{}, fmt.Errorf("turn: %w", err)
	}
	return f, nil
}

// LastFinishedTurn returns the id of the session's last turn that started
// and ended ("" when none).
func (s *Store) LastFinishedTurn(ctx context.Context, sessionID string) (string, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return "", fmt.Errorf("last finished turn: %w", err)
	}
	var id string
	err = s.rdb.QueryRowContext(ctx, `SELECT e.turn_id FROM events e WHERE e.session_pk = ?1 AND e.type = 'turn_end' AND e.turn_id != ''
		AND EXISTS (SELECT 1 FROM events x WHERE x.session_pk = ?1 AND x.turn_id = e.turn_id AND x.type = 'turn_start')
		ORDER BY e.seq DESC LIMIT 1`, pk).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("last finished turn: %w", err)
	}
	return id, nil
}

// ForkInput is a fork to make (ForkSession).
type ForkInput struct {
	SourceID string
	TurnID   string
	// ID is the new session's id (generated when empty).
	ID    string
	Title string
	// Rewrite, when set, changes each copied history message (it must be
	// a pure function: the write may run more than once).
	Rewrite func(llm.Message) llm.Message
	// Usage, when set, reads the session totals from the data of the last
	// copied usage event: they become the fork's (Session.Usage).
	Usage func(data []byte) (json.RawMessage, int64)
}

// ErrNoMark: a fork of a turn without a mark (not finished, or its history
// was rewritten since).
var ErrNoMark = errors.New("turn has no history mark")

// ForkSession makes, in one transaction, a new session whose history is
// the source's up to and including in.TurnID (its mark): the history's
// first Messages messages, the events up to the turn's turn_end (same
// seqs, so a replay shows the same log), the marks of those turns, the
// grants, the compaction state, the settings and the usage totals as the
// last copied usage event had them. Pending requests and the turn queue
// are not copied: the fork is at rest. The source is not changed. Files
// are the caller's (SessionDir).
func (s *Store) ForkSession(ctx context.Context, in ForkInput) (Session, TurnMark, error) {
	if in.ID == "" {
		in.ID = newID()
	}
	if !validID(in.ID) {
		return Session{}, TurnMark{}, fmt.Errorf("fork session: %w: id %q", ErrInvalid, in.ID)
	}
	var out Session
	var mark TurnMark
	err := s.write(ctx, func(t *wtx) error {
		src, err := scanSession(t.queryRow("SELECT "+sessionCols+" FROM sessions WHERE id = ?", in.SourceID))
		if err != nil {
			return refuse(notFound(err, "session", in.SourceID))
		}
		var srcPK int64
		if err := t.queryRow("SELECT pk FROM sessions WHERE id = ?", in.SourceID).Scan(&srcPK); err != nil {
			return err
		}
		mark = TurnMark{TurnID: in.TurnID}
		err = t.queryRow("SELECT messages, seq FROM turn_marks WHERE session_pk = ? AND turn_id = ?", srcPK, in.TurnID).
			Scan(&mark.Messages, &mark.Seq)
		if errors.Is(err, sql.ErrNoRows) {
			return refuse(fmt.Errorf("turn %q: %w", in.TurnID, ErrNoMark))
		}
		if err != nil {
			return err
		}
		msgs, err := t.forkMessages(srcPK, mark.Messages, in.Rewrite)
		if err != nil {
			return err
		}
		var tasks int
		if err := t.queryRow("SELECT count(*) FROM events WHERE session_pk = ? AND seq <= ? AND type = 'turn_start'",
			srcPK, mark.Seq).Scan(&tasks); err != nil {
			return err
		}
		usage, usageSeq, err := t.forkUsage(srcPK, mark.Seq, in.Usage)
		if err != nil {
			return err
		}
		now := t.nowMS()
		var project any
		if src.ProjectID != "" {
			project = src.ProjectID
		}
		res, err := t.exec(`INSERT INTO sessions (id, project_id, title, title_source, model, mode, agent,
			provider, status, task_count, last_seq, checkpoint_seq, created_at, updated_at, settings, usage, usage_seq,
			forked_from, forked_turn)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			in.ID, project, in.Title, src.TitleSource, src.Model, src.Mode, src.Agent, src.Provider, StatusIdle,
			tasks, mark.Seq, mark.Seq, now, now, string(src.Settings), usage, usageSeq, in.SourceID, in.TurnID)
		if err != nil {
			return err
		}
		pk, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for i, b := range msgs {
			if _, err := t.w.st.putMessage.ExecContext(t.ctx, pk, i, string(b)); err != nil {
				return fmt.Errorf("fork message %d: %w", i, err)
			}
		}
		copies := []struct {
			what, q string
			args    []any
		}{
			{"events", `INSERT INTO events (session_pk, seq, turn_id, type, data, time)
				SELECT ?, seq, turn_id, type, data, time FROM events WHERE session_pk = ? AND seq <= ?`, []any{pk, srcPK, mark.Seq}},
			{"turn marks", `INSERT INTO turn_marks (session_pk, turn_id, messages, seq)
				SELECT ?, turn_id, messages, seq FROM turn_marks WHERE session_pk = ? AND seq <= ? AND messages <= ?`,
				[]any{pk, srcPK, mark.Seq, mark.Messages}},
			{"grants", `INSERT INTO grants (session_pk, session_tools, session_commands, directories, grant_times, updated_at)
				SELECT ?, session_tools, session_commands, directories, grant_times, ? FROM grants WHERE session_pk = ?`,
				[]any{pk, now, srcPK}},
			{"compaction", `INSERT INTO compaction (session_pk, state, updated_at)
				SELECT ?, state, ? FROM compaction WHERE session_pk = ?`, []any{pk, now, srcPK}},
		}
		for _, c := range copies {
			if _, err := t.exec(c.q, c.args...); err != nil {
				return fmt.Errorf("fork %s: %w", c.what, err)
			}
		}
		t.forgetCache(in.ID)
		out, err = scanSession(t.queryRow("SELECT "+sessionCols+" FROM sessions WHERE pk = ?", pk))
		return err
	})
	if err != nil {
		return Session{}, TurnMark{}, fmt.Errorf("fork session: %w", err)
	}
	return out, mark, nil
}

// forkMessages reads the first n history messages of session pk, encoded
// again after rewrite (nil: as stored).
func (t *wtx) forkMessages(pk int64, n int, rewrite func(llm.Message) llm.Message) ([][]byte, error) {
	rows, err := t.query("SELECT idx, data FROM messages WHERE session_pk = ? AND idx < ? ORDER BY idx", pk, n)
	if err != nil {
		return nil, fmt.Errorf("fork history: %w", err)
	}
	defer rows.Close()
	out := make([][]byte, 0, n)
	for rows.Next() {
		var idx int
		var data []byte
		if err := rows.Scan(&idx, &data); err != nil {
			return nil, fmt.Errorf("fork history: %w", err)
		}
		if idx != len(out) {
			return nil, fmt.Errorf("fork history: %w: message %d missing", ErrCorrupt, len(out))
		}
		if rewrite != nil {
			var m llm.Message
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("fork history: %w: %v", ErrCorrupt, err)
			}
			if data, err = marshalMessage(idx, rewrite(m)); err != nil {
				return nil, fmt.Errorf("fork history: %w", err)
			}
		}
		out = append(out, data)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("fork history: %w", err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("fork history: %w: %d messages stored, the turn's mark says %d", ErrCorrupt, len(out), n)
	}
	return out, nil
}

// forkUsage reads the totals of session pk's last usage event up to seq
// through read ("", 0 without one).
func (t *wtx) forkUsage(pk, seq int64, read func([]byte) (json.RawMessage, int64)) (string, int64, error) {
	if read == nil {
		return "", 0, nil
	}
	var data []byte
	err := t.queryRow(`SELECT data FROM events WHERE session_pk = ? AND seq <= ? AND type = 'usage'
		ORDER BY json_extract(data, '$.requests') DESC, seq DESC LIMIT 1`, pk, seq).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("fork usage: %w", err)
	}
	u, n := read(data)
	return string(u), n, nil
}
