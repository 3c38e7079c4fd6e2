package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// exported collects a session's export view (its events drained).
func exported(t *testing.T, s *Store, id string, during func()) (ExportView, []Event) {
	t.Helper()
	var view ExportView
	var evs []Event
	require.NoError(t, s.ReadForExport(context.Background(), id, func(v ExportView) error {
		if during != nil {
			during()
		}
		view = v
		for e, err := range v.Events {
			if err != nil {
				return err
			}
			evs = append(evs, e)
		}
		return nil
	}))
	return view, evs
}

// TestExportViewIsOneSnapshot: what commits while an export reads (here:
// a whole turn of 2,500 events, more than a page, with a new history) is
// not in it; the row, the history and the log it sees agree.
func TestExportViewIsOneSnapshot(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	ss := newSession(t, s)
	h := []llm.Message{{Role: llm.RoleUser, Content: "one"}, {Role: llm.RoleAssistant, Content: "two"}}
	for i := range 2100 {
		in := EventInput{TurnID: "turn_1", Type: "assistant_delta", Data: json.RawMessage(`{"text":"x"}`)}
		if i == 2099 {
			in.Type, in.History = "turn_end", h
		}
		_, err := s.Append(ctx, ss.ID, in)
		require.NoError(t, err)
	}
	require.NoError(t, s.SaveCompaction(ctx, ss.ID, json.RawMessage(`{"n":1}`)))
	view, evs := exported(t, s, ss.ID, func() {
		for i := range 2500 {
			in := EventInput{TurnID: "turn_2", Type: "assistant_delta", Data: json.RawMessage(`{"text":"y"}`)}
			if i == 2499 {
				in.History = append(h, llm.Message{Role: llm.RoleUser, Content: "three"})
			}
			_, err := s.Append(ctx, ss.ID, in)
			require.NoError(t, err)
		}
	})
	require.Equal(t, 2100, len(evs), "the events of one snapshot")
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.Seq)
		require.Equal(t, "turn_1", e.TurnID)
	}
	require.Equal(t, int64(2100), view.Session.LastSeq)
	require.Equal(t, h, view.Messages)
	require.JSONEq(t, `{"n":1}`, string(view.Compaction))
	require.Zero(t, view.Queued)
	require.Zero(t, view.Pending)

	last, err := s.LastSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(4600), last, "the writes went through meanwhile")
}

// TestImportSession: the new session has a new id, the row's title and
// settings, the log renumbered 1..N, the history and compaction state, its
// files in its folder; the next event continues at N+1 and the next
// checkpoint starts from the imported history.
func TestImportSession(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	p, err := s.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	files, err := s.ImportDir()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(files, "attachments"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(files, "attachments", "1-0-a.png"), []byte("png"), 0o600))
	h := []llm.Message{
		{Role: llm.RoleUser, Content: "look", AttachmentRefs: []llm.StoredAttachment{{Name: "a.png", MimeType: "image/png", Size: 3, Path: "attachments/1-0-a.png"}}},
		{Role: llm.RoleAssistant, Content: "nice"},
	}
	in := ImportInput{
		Session: Session{ID: "ignored", ProjectID: p.ID, Title: "Pictures", TitleSource: "user", Model: "m", Mode: "plan",
			Status: "running", TaskCount: 3, Settings: json.RawMessage(`{"lang":"en"}`), Usage: json.RawMessage(`{"inputTokens":5}`)},
		Events: []Event{
			{Seq: 40, TurnID: "turn_1", Type: "turn_start", Data: json.RawMessage(`{"input":"look"}`), Time: t0()},
			{Seq: 41, TurnID: "turn_1", Type: "turn_end", Data: json.RawMessage(`{"status":"completed"}`), Time: t0()},
		},
		History:    h,
		Compaction: json.RawMessage(`{"n":2}`),
		Mark:       &TurnMark{TurnID: "turn_1", Messages: 2, Seq: 2},
		Files:      files,
	}
	ss, err := s.ImportSession(ctx, in)
	require.NoError(t, err)
	require.NotEqual(t, "ignored", ss.ID)
	require.Equal(t, "Pictures", ss.Title)
	require.Equal(t, "user", ss.TitleSource)
	require.Equal(t, StatusIdle, ss.Status, "an imported session is at rest")
	require.Equal(t, int64(2), ss.LastSeq)
	require.Equal(t, 3, ss.TaskCount)
	require.JSONEq(t, `{"lang":"en"}`, string(ss.Settings))
	require.JSONEq(t, `{"inputTokens":5}`, string(ss.Usage))
	_, err = os.Stat(files)
	require.ErrorIs(t, err, os.ErrNotExist, "the import folder became the session's")
	b, err := os.ReadFile(filepath.Join(s.SessionDir(ss.ID), "attachments", "1-0-a.png"))
	require.NoError(t, err)
	require.Equal(t, "png", string(b))

	evs, err := s.EventsAfter(ctx, ss.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, []int64{1, 2}, []int64{evs[0].Seq, evs[1].Seq})
	require.Equal(t, "turn_end", evs[1].Type)
	require.True(t, evs[0].Time.Equal(t0()))
	msgs, err := s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, h, msgs)
	cp, err := s.CheckpointSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(2), cp)
	state, err := s.Compaction(ctx, ss.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"n":2}`, string(state))

	facts, err := s.Turn(ctx, ss.ID, "turn_1")
	require.NoError(t, err)
	require.Equal(t, &TurnMark{TurnID: "turn_1", Messages: 2, Seq: 2}, facts.Mark)

	next := append(h, llm.Message{Role: llm.RoleUser, Content: "more"})
	appended, err := s.Append(ctx, ss.ID, EventInput{TurnID: "turn_2", Type: "turn_end", History: next})
	require.NoError(t, err)
	require.Equal(t, int64(3), appended[0].Seq)
	msgs, err = s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, next, msgs)
}

// TestImportSessionIsWholeOrNothing: a refused import (its project is
// gone) leaves no row and no folder; a folder a crash left behind is
// removed by the next Open.
func TestImportSessionIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, Options{})
	require.NoError(t, err)
	ctx := context.Background()
	files, err := s.ImportDir()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(files, "x"), []byte("x"), 0o600))
	_, err = s.ImportSession(ctx, ImportInput{Session: Session{ProjectID: "no-such-project"}, Files: files,
		Events: []Event{{Type: "turn_start", Data: json.RawMessage(`{}`), Time: t0()}}})
	require.ErrorIs(t, err, ErrNotFound)
	list, err := s.Sessions(ctx, "")
	require.NoError(t, err)
	require.Empty(t, list)
	entries, err := os.ReadDir(filepath.Join(dir, sessionsDir))
	require.NoError(t, err)
	require.Empty(t, entries, "the files were removed with the refusal")

	_, err = s.ImportSession(ctx, ImportInput{Session: Session{ProjectID: "p"}, Files: filepath.Join(t.TempDir(), "elsewhere")})
	require.ErrorIs(t, err, ErrInvalid, "only a folder of ImportDir moves")

	left, err := s.ImportDir() // a crash before the import
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s, err = Open(context.Background(), dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = os.Stat(left)
	require.ErrorIs(t, err, os.ErrNotExist, "swept at Open")
}

// t0 is a time of the events of these tests (milliseconds: as stored).
func t0() time.Time { return time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC) }
