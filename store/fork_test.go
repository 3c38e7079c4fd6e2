package store

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

func msg(role, content string) llm.Message { return llm.Message{Role: role, Content: content} }

// twoTurns stores two finished turns in ss (history sys,u1,a1 then
// u2,tool,a2) with grants and compaction state, and returns the seq of
// each turn_end.
func twoTurns(t *testing.T, s *Store, ss Session) (end1, end2 int64) {
	t.Helper()
	ctx := ctxT(t)
	h1 := []llm.Message{msg("system", "be brief"), msg("user", "one"), msg("assistant", "first")}
	evs, err := s.Append(ctx, ss.ID,
		EventInput{TurnID: "t1", Type: "turn_start", CountTask: true},
		EventInput{TurnID: "t1", Type: "usage", Data: json.RawMessage(`{"requests":1,"n":"t1"}`)},
		EventInput{TurnID: "t1", Type: "turn_end", History: h1, MarkTurn: true})
	require.NoError(t, err)
	end1 = evs[2].Seq
	h2 := append(h1, msg("user", "two"), llm.Message{Role: "tool", ToolCallID: "c1", Content: "saved to /old/tool-results/t2-c1.txt"}, msg("assistant", "second"))
	evs, err = s.Append(ctx, ss.ID,
		EventInput{TurnID: "t2", Type: "turn_start", CountTask: true},
		EventInput{TurnID: "t2", Type: "usage", Data: json.RawMessage(`{"requests":2,"n":"t2"}`)},
		EventInput{TurnID: "t2", Type: "turn_end", History: h2, MarkTurn: true})
	require.NoError(t, err)
	end2 = evs[2].Seq
	require.NoError(t, s.SaveGrants(ctx, ss.ID, Grants{SessionTools: []string{"write_file"}, SessionCommands: []string{"ls"}}))
	require.NoError(t, s.SaveCompaction(ctx, ss.ID, json.RawMessage(`{"compactions":0}`)))
	return end1, end2
}

// TestForkSession: a fork of the first of two turns has that turn's
// history, its events with their seqs, the grants, the compaction state,
// the settings and the usage of its last usage event; the source is
// unchanged; a fork of the fork works from the copied marks.
func TestForkSession(t *testing.T) {
	ctx := ctxT(t)
	s := openTest(t)
	ss := newSession(t, s)
	ss, err := s.UpdateSession(ctx, ss.ID, func(x *Session) {
		x.Title, x.Mode, x.Settings = "Plan", "auto", json.RawMessage(`{"shellPolicy":"all"}`)
	})
	require.NoError(t, err)
	end1, end2 := twoTurns(t, s, ss)

	f, err := s.Turn(ctx, ss.ID, "t1")
	require.NoError(t, err)
	require.Equal(t, TurnFacts{Started: true, Ended: true, Mark: &TurnMark{TurnID: "t1", Messages: 3, Seq: end1}}, f)
	f, err = s.Turn(ctx, ss.ID, "t2")
	require.NoError(t, err)
	require.Equal(t, &TurnMark{TurnID: "t2", Messages: 6, Seq: end2}, f.Mark)

	usage := func(data []byte) (json.RawMessage, int64) { return json.RawMessage(`{"from":` + string(data) + `}`), 7 }
	fork, mark, err := s.ForkSession(ctx, ForkInput{SourceID: ss.ID, TurnID: "t1", Title: "Plan (fork)", Usage: usage})
	require.NoError(t, err)
	require.Equal(t, TurnMark{TurnID: "t1", Messages: 3, Seq: end1}, mark)
	require.NotEqual(t, ss.ID, fork.ID)
	require.Equal(t, "Plan (fork)", fork.Title)
	require.Equal(t, ss.ID, fork.ForkedFrom)
	require.Equal(t, "t1", fork.ForkedTurn)
	require.Equal(t, "auto", fork.Mode)
	require.Equal(t, ss.ProjectID, fork.ProjectID)
	require.JSONEq(t, `{"shellPolicy":"all"}`, string(fork.Settings))
	require.Equal(t, StatusIdle, fork.Status)
	require.Equal(t, 1, fork.TaskCount)
	require.Equal(t, end1, fork.LastSeq)
	require.JSONEq(t, `{"from":{"requests":1,"n":"t1"}}`, string(fork.Usage))

	msgs, err := s.Messages(ctx, fork.ID)
	require.NoError(t, err)
	require.Equal(t, []llm.Message{msg("system", "be brief"), msg("user", "one"), msg("assistant", "first")}, msgs)
	evs := allEvents(t, s, fork.ID)
	src := allEvents(t, s, ss.ID)
	require.Len(t, evs, int(end1))
	for i, e := range evs {
		require.Equal(t, src[i].Seq, e.Seq)
		require.Equal(t, src[i].Type, e.Type)
		require.Equal(t, src[i].TurnID, e.TurnID)
		require.JSONEq(t, string(src[i].Data), string(e.Data))
	}
	g, err := s.Grants(ctx, fork.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"write_file"}, g.SessionTools)
	require.Equal(t, []string{"ls"}, g.SessionCommands)
	c, err := s.Compaction(ctx, fork.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"compactions":0}`, string(c))
	f, err = s.Turn(ctx, fork.ID, "t2")
	require.NoError(t, err)
	require.Equal(t, TurnFacts{}, f, "the fork has no later turn")

	// The source is as it was.
	msgs, err = s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 6)
	require.Len(t, allEvents(t, s, ss.ID), int(end2))
	again, err := s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Empty(t, again.ForkedFrom)
	require.Equal(t, "Plan", again.Title)

	// A fork of t2 rewrites its tool messages; a fork of the fork keeps
	// the copied marks.
	rw := func(m llm.Message) llm.Message {
		m.Content = strings.ReplaceAll(m.Content, "/old/", "/new/")
		return m
	}
	f2, _, err := s.ForkSession(ctx, ForkInput{SourceID: ss.ID, TurnID: "t2", Rewrite: rw})
	require.NoError(t, err)
	msgs, err = s.Messages(ctx, f2.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 6)
	require.Equal(t, "saved to /new/tool-results/t2-c1.txt", msgs[4].Content)
	require.Empty(t, f2.Usage, "no usage reader: no totals")
	f3, _, err := s.ForkSession(ctx, ForkInput{SourceID: f2.ID, TurnID: "t1"})
	require.NoError(t, err)
	msgs, err = s.Messages(ctx, f3.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 3)

	// The last finished turn is the last that started and ended: not a
	// queued turn that ended unstarted.
	_, err = s.Append(ctx, ss.ID, EventInput{TurnID: "tq", Type: "turn_end", MarkTurn: true})
	require.NoError(t, err)
	last, err := s.LastFinishedTurn(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, "t2", last)
	last, err = s.LastFinishedTurn(ctx, f3.ID)
	require.NoError(t, err)
	require.Equal(t, "t1", last)
	_, err = s.LastFinishedTurn(ctx, "nope")
	require.ErrorIs(t, err, ErrNotFound)

	_, _, err = s.ForkSession(ctx, ForkInput{SourceID: ss.ID, TurnID: "t9"})
	require.ErrorIs(t, err, ErrNoMark)
	_, _, err = s.ForkSession(ctx, ForkInput{SourceID: "nope", TurnID: "t1"})
	require.ErrorIs(t, err, ErrNotFound)

	// Deleting the source leaves the fork whole.
	require.NoError(t, s.DeleteSession(ctx, ss.ID))
	msgs, err = s.Messages(ctx, fork.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 3)
}

// TestTurnMarksFollowRewrites: a new system prompt keeps the marks; a
// compaction (an earlier message rewritten) drops the marks it spoils; a
// history cut shorter drops the marks past its end.
func TestTurnMarksFollowRewrites(t *testing.T) {
	ctx := ctxT(t)
	s := openTest(t)
	ss := newSession(t, s)
	twoTurns(t, s, ss)
	hist, err := s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	mark := func(turn string) *TurnMark {
		f, err := s.Turn(ctx, ss.ID, turn)
		require.NoError(t, err)
		return f.Mark
	}
	checkpoint := func(h []llm.Message) {
		_, err := s.Append(ctx, ss.ID, EventInput{TurnID: "t3", Type: "tool_finished", History: h})
		require.NoError(t, err)
	}

	sys := append([]llm.Message{msg("system", "another agent")}, hist[1:]...)
	checkpoint(sys)
	require.NotNil(t, mark("t1"), "a new system prompt is no new history")
	require.NotNil(t, mark("t2"))

	// Cut back to t1's end (a rewind): t2's mark goes, t1's stays.
	checkpoint(sys[:3])
	require.NotNil(t, mark("t1"))
	require.Nil(t, mark("t2"))

	// Compaction rewrites message 1: every mark past it goes.
	checkpoint([]llm.Message{sys[0], {Role: "user", Notice: "summary", Content: "<summary/>"}, msg("assistant", "first")})
	require.Nil(t, mark("t1"))
	_, _, err = s.ForkSession(ctx, ForkInput{SourceID: ss.ID, TurnID: "t1"})
	require.ErrorIs(t, err, ErrNoMark)

	// A turn that ends after the compaction is marked again.
	_, err = s.Append(ctx, ss.ID, EventInput{TurnID: "t3", Type: "turn_end", MarkTurn: true})
	require.NoError(t, err)
	require.Equal(t, 3, mark("t3").Messages)
}

// TestMigrateTurnMarks: version 7 gives a session at rest the mark of its
// last finished turn (its stored history) and a busy one none.
func TestMigrateTurnMarks(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBFile), defaultBusy, false))
	require.NoError(t, err)
	require.NoError(t, migrate(ctx, db, migrations[:6]))
	_, err = db.Exec(`INSERT INTO projects (id, path, created_at, opened_at) VALUES ('p1', '/w', 1, 1);
		INSERT INTO sessions (id, project_id, status, created_at, updated_at) VALUES
			('s1', 'p1', 'idle', 1, 1), ('s2', 'p1', 'running', 1, 1);
		INSERT INTO events (session_pk, seq, turn_id, type, data, time) VALUES
			(1, 1, 't1', 'turn_start', '{}', 1), (1, 2, 't1', 'turn_end', '{}', 1),
			(1, 3, 't2', 'turn_start', '{}', 1), (1, 4, 't2', 'turn_end', '{}', 1),
			(2, 1, 't3', 'turn_start', '{}', 1), (2, 2, 't3', 'turn_end', '{}', 1), (2, 3, 't4', 'turn_start', '{}', 1);
		INSERT INTO messages (session_pk, idx, data) VALUES
			(1, 0, '{"role":"user","content":"a"}'), (1, 1, '{"role":"assistant","content":"b"}'),
			(2, 0, '{"role":"user","content":"c"}');`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	f, err := s.Turn(ctx, "s1", "t2")
	require.NoError(t, err)
	require.Equal(t, &TurnMark{TurnID: "t2", Messages: 2, Seq: 4}, f.Mark)
	f, err = s.Turn(ctx, "s1", "t1")
	require.NoError(t, err)
	require.Nil(t, f.Mark, "an earlier turn's end is not known")
	f, err = s.Turn(ctx, "s2", "t3")
	require.NoError(t, err)
	require.Nil(t, f.Mark, "a busy session's history is not its last finished turn's")
	ss, err := s.Session(ctx, "s1")
	require.NoError(t, err)
	require.Empty(t, ss.ForkedFrom)
}
