package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProjects(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	dir := t.TempDir()
	p1, err := s.UpsertProject(ctx, dir)
	require.NoError(t, err)
	p2, err := s.UpsertProject(ctx, dir+string(filepath.Separator)+".")
	require.NoError(t, err)
	require.Equal(t, p1.ID, p2.ID, "same path, same id")
	require.Equal(t, dir, p2.Path)
	require.False(t, p2.OpenedAt.Before(p1.OpenedAt))

	other, err := s.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	require.NotEqual(t, p1.ID, other.ID)

	got, err := s.Project(ctx, p1.ID)
	require.NoError(t, err)
	require.Equal(t, p1.Path, got.Path)
	all, err := s.Projects(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	_, err = s.Project(ctx, "nope")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestSessionLifecycle(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	p, err := s.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)

	_, err = s.CreateSession(ctx, Session{ProjectID: "missing"})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.CreateSession(ctx, Session{ID: "../evil"})
	require.ErrorIs(t, err, ErrInvalid)

	a, err := s.CreateSession(ctx, Session{ProjectID: p.ID, Title: "first", Model: "gpt", Mode: "default",
		Settings: json.RawMessage(`{"shellPolicy":"sandbox"}`)})
	require.NoError(t, err)
	require.NotEmpty(t, a.ID)
	require.Equal(t, StatusIdle, a.Status)
	require.Equal(t, "auto", a.TitleSource)
	b, err := s.CreateSession(ctx, Session{ProjectID: p.ID})
	require.NoError(t, err)
	require.JSONEq(t, `{}`, string(b.Settings))

	got, err := s.Session(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, "first", got.Title)
	require.JSONEq(t, `{"shellPolicy":"sandbox"}`, string(got.Settings))

	time.Sleep(2 * time.Millisecond) // distinct updated_at for the order check below
	up, err := s.UpdateSession(ctx, a.ID, func(ss *Session) {
		ss.Title, ss.TitleSource, ss.Model = "renamed", "user", "other"
		ss.ID = "ignored"
	})
	require.NoError(t, err)
	require.Equal(t, a.ID, up.ID)
	require.Equal(t, "renamed", up.Title)
	got, err = s.Session(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, "user", got.TitleSource)
	require.Equal(t, "other", got.Model)

	_, err = s.UpdateSession(ctx, a.ID, func(ss *Session) { ss.Status = "Not A Status!" })
	require.ErrorIs(t, err, ErrInvalid)

	list, err := s.Sessions(ctx, p.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, a.ID, list[0].ID, "most recently updated first")
	all, err := s.Sessions(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 2)

	// Delete removes rows and files.
	_, err = s.Append(ctx, a.ID, EventInput{Type: "turn_start", TurnID: "t1"})
	require.NoError(t, err)
	dir := s.SessionDir(a.ID)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "attachments"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "attachments", "x.png"), []byte("png"), 0o600))
	require.NoError(t, s.DeleteSession(ctx, a.ID))
	_, err = os.Stat(dir)
	require.True(t, os.IsNotExist(err), "session folder removed")
	_, err = s.Session(ctx, a.ID)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.EventsAfter(ctx, a.ID, 0, 10)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.Append(ctx, a.ID, EventInput{Type: "x"})
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, s.DeleteSession(ctx, a.ID), ErrNotFound)
	var n int
	require.NoError(t, s.rdb.QueryRow("SELECT count(*) FROM events").Scan(&n))
	require.Zero(t, n, "events cascade")
}

func TestAppendAndPaging(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	ss := newSession(t, s)
	evs, err := s.Append(ctx, ss.ID,
		EventInput{TurnID: "t1", Type: "turn_start", Data: rawJSON(map[string]any{"taskId": "t1", "input": "hi"}), CountTask: true},
		EventInput{TurnID: "t1", Type: "assistant_delta", Data: rawJSON(map[string]any{"text": "a"})})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, []int64{evs[0].Seq, evs[1].Seq})

	_, err = s.Append(ctx, ss.ID, EventInput{Type: "x", Data: json.RawMessage(`{bad`)})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = s.Append(ctx, ss.ID, EventInput{Data: json.RawMessage(`{}`)})
	require.ErrorIs(t, err, ErrInvalid)

	for i := range 250 {
		_, err := s.Append(ctx, ss.ID, EventInput{TurnID: "t1", Type: "assistant_delta", Data: rawJSON(map[string]any{"i": i})})
		require.NoError(t, err)
	}
	all := allEvents(t, s, ss.ID)
	require.Len(t, all, 252)
	requireGapFree(t, all)
	require.JSONEq(t, `{"taskId":"t1","input":"hi"}`, string(all[0].Data))
	page, err := s.EventsAfter(ctx, ss.ID, 100, 10)
	require.NoError(t, err)
	require.Len(t, page, 10)
	require.Equal(t, int64(101), page[0].Seq)
	last, err := s.LastSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(252), last)
	got, err := s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(252), got.LastSeq)
	require.Equal(t, 1, got.TaskCount, "CountTask counts a task")
}

func TestEnqueueOrderAndFlush(t *testing.T) {
	s := openTest(t)
	ss := newSession(t, s)
	var mu sync.Mutex
	var seqs []int64
	const n = 3000
	for i := range n {
		s.Enqueue(ss.ID, EventInput{Type: "assistant_delta", Data: rawJSON(map[string]int{"i": i})}, func(e Event, err error) {
			assert.NoError(t, err) // not require: this runs on the writer goroutine
			var d struct{ I int }
			assert.NoError(t, json.Unmarshal(e.Data, &d))
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, len(seqs), d.I, "done runs in enqueue order")
			seqs = append(seqs, e.Seq)
		})
	}
	require.NoError(t, s.Flush(ctxT(t)))
	mu.Lock()
	require.Len(t, seqs, n)
	for i, q := range seqs {
		require.Equal(t, int64(i+1), q)
	}
	mu.Unlock()

	// A bad event fails alone; its neighbours in the batch commit.
	errs := make(chan error, 3)
	s.Enqueue(ss.ID, EventInput{Type: "a"}, func(_ Event, err error) { errs <- err })
	s.Enqueue("no-such-session", EventInput{Type: "b"}, func(_ Event, err error) { errs <- err })
	s.Enqueue(ss.ID, EventInput{Type: "c"}, func(_ Event, err error) { errs <- err })
	require.NoError(t, <-errs)
	require.ErrorIs(t, <-errs, ErrNotFound)
	require.NoError(t, <-errs)
	requireGapFree(t, allEvents(t, s, ss.ID))
	last, err := s.LastSeq(ctxT(t), ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(n+2), last)
}

func TestCheckpointHistory(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	ss := newSession(t, s)
	ref := llm.StoredAttachment{Name: "shot.png", MimeType: "image/png", Size: 3, Path: "attachments/1-0-shot.png"}
	h := []llm.Message{
		{Role: llm.RoleSystem, Content: "sys"},
		{Role: llm.RoleUser, Content: "look", Attachments: []llm.Attachment{{Name: "shot.png", MimeType: "image/png",
			DataURL: "data:image/png;base64,cG5n"}}, AttachmentRefs: []llm.StoredAttachment{ref}},
		{Role: llm.RoleAssistant, Content: "", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: llm.RoleTool, Content: "body", ToolCallID: "c1", Name: "read_file"},
	}
	evs, err := s.Append(ctx, ss.ID, EventInput{Type: "iteration_end", History: h})
	require.NoError(t, err)
	got, err := s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, got, 4)
	require.Nil(t, got[1].Attachments, "base64 never stored")
	require.Equal(t, []llm.StoredAttachment{ref}, got[1].AttachmentRefs)
	require.Equal(t, h[2].ToolCalls, got[2].ToolCalls)
	var raw string
	require.NoError(t, s.rdb.QueryRow("SELECT group_concat(data) FROM messages").Scan(&raw))
	require.NotContains(t, raw, "base64")
	cs, err := s.CheckpointSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, evs[0].Seq, cs)

	// Growth, then a compaction that shrinks and rewrites.
	h = append(h, llm.Message{Role: llm.RoleAssistant, Content: "done"})
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "iteration_end", History: h})
	require.NoError(t, err)
	got, err = s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, got, 5)
	short := []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "summary", Notice: "compaction"}}
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "turn_end", History: short})
	require.NoError(t, err)
	got, err = s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, short, got)

	// A reopened store (cold cache) diffs against what is on disk.
	require.NoError(t, s.Close())
	s2, err := Open(ctx, s.Dir(), Options{})
	require.NoError(t, err)
	defer s2.Close()
	grown := append(short, llm.Message{Role: llm.RoleUser, Content: "next"})
	grown[0].Content = "sys2"
	_, err = s2.Append(ctx, ss.ID, EventInput{Type: "iteration_end", History: grown})
	require.NoError(t, err)
	got, err = s2.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, grown, got)
	_, err = s2.Append(ctx, ss.ID, EventInput{Type: "turn_end", History: []llm.Message{}})
	require.NoError(t, err)
	got, err = s2.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestPendingRequests(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	a, b := newSession(t, s), newSession(t, s)
	data := rawJSON(map[string]any{"taskId": "t1", "reqId": "call1", "requestId": "r1", "name": "run_shell"})
	evs, err := s.Append(ctx, a.ID, EventInput{TurnID: "t1", Type: "permission_required", Data: data,
		Pending: &PendingInput{RequestID: "r1", Kind: KindApproval, ToolCallID: "call1"}})
	require.NoError(t, err)
	_, err = s.Append(ctx, a.ID, EventInput{TurnID: "t1", Type: "x", Pending: &PendingInput{RequestID: "r2", Kind: "weird"}})
	require.ErrorIs(t, err, ErrInvalid)

	pend, err := s.PendingRequests(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1)
	p := pend[0]
	require.Equal(t, "r1", p.RequestID)
	require.Equal(t, KindApproval, p.Kind)
	require.Equal(t, "t1", p.TurnID)
	require.Equal(t, "call1", p.ToolCallID)
	require.Equal(t, evs[0].Seq, p.Seq)
	require.JSONEq(t, string(data), string(p.Data), "payload defaults to the event data")
	require.False(t, p.Answered)

	_, err = s.AnswerRequest(ctx, b.ID, "r1", json.RawMessage(`{"outcome":"once"}`), "")
	require.ErrorIs(t, err, ErrNotFound, "another session's request")
	_, err = s.AnswerRequest(ctx, a.ID, "r-unknown", nil, "")
	require.ErrorIs(t, err, ErrNotFound)

	// Concurrent answers: exactly one wins.
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := s.AnswerRequest(ctx, a.ID, "r1", rawJSON(map[string]any{"outcome": "once", "by": i}), "ui")
			results <- err
		})
	}
	wg.Wait()
	close(results)
	wins := 0
	for err := range results {
		if err == nil {
			wins++
		} else {
			require.ErrorIs(t, err, ErrAlreadyAnswered)
		}
	}
	require.Equal(t, 1, wins)
	r, err := s.Request(ctx, "r1")
	require.NoError(t, err)
	require.True(t, r.Answered)
	require.NotNil(t, r.AnsweredAt)
	require.Equal(t, "ui", r.AnswerNote)
	pend, err = s.PendingRequests(ctx, a.ID)
	require.NoError(t, err)
	require.Empty(t, pend)

	// turn_end with ClosePending closes the turn's open requests only.
	_, err = s.Append(ctx, a.ID,
		EventInput{TurnID: "t2", Type: "ask_user_question", Pending: &PendingInput{RequestID: "q1", Kind: KindQuestion}},
		EventInput{TurnID: "t3", Type: "plan_proposed", Pending: &PendingInput{RequestID: "p1", Kind: KindPlan}})
	require.NoError(t, err)
	_, err = s.Append(ctx, a.ID, EventInput{TurnID: "t2", Type: "turn_end", ClosePending: true})
	require.NoError(t, err)
	pend, err = s.PendingRequests(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1)
	require.Equal(t, "p1", pend[0].RequestID)
	_, err = s.AnswerRequest(ctx, a.ID, "q1", nil, "")
	require.ErrorIs(t, err, ErrAlreadyAnswered)
	ids, err := s.CloseRequests(ctx, a.ID, "session reset")
	require.NoError(t, err)
	require.Equal(t, []string{"p1"}, ids)
}

func TestGrantsCompactionSettings(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	ss := newSession(t, s)
	g, err := s.Grants(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, Grants{}, g)
	want := Grants{SessionTools: []string{"write_file"}, SessionCommands: []string{"git"},
		Directories: []confine.Grant{{Path: "/tmp/x", Writable: true}}}
	require.NoError(t, s.SaveGrants(ctx, ss.ID, want))
	g, err = s.Grants(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, want, g)
	require.ErrorIs(t, s.SaveGrants(ctx, "nope", want), ErrNotFound)

	c, err := s.Compaction(ctx, ss.ID)
	require.NoError(t, err)
	require.Nil(t, c)
	require.NoError(t, s.SaveCompaction(ctx, ss.ID, json.RawMessage(`{"boundary":3}`)))
	c, err = s.Compaction(ctx, ss.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"boundary":3}`, string(c))

	_, err = s.Setting(ctx, "theme")
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.SetSetting(ctx, "theme", json.RawMessage(`"dark"`)))
	v, err := s.Setting(ctx, "theme")
	require.NoError(t, err)
	require.JSONEq(t, `"dark"`, string(v))
	require.NoError(t, s.SetSetting(ctx, "theme", nil))
	_, err = s.Setting(ctx, "theme")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestProviderProfilesAndAgents(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	p := ProviderProfile{Name: "local", BaseURL: "http://127.0.0.1:8080/v1", DefaultModel: "qwen",
		Headers: map[string]string{"X-Org": "a"}, ContextWindow: 32000}
	require.NoError(t, s.PutProviderProfile(ctx, p))
	got, err := s.ProviderProfile(ctx, "local")
	require.NoError(t, err)
	require.Equal(t, "auto", got.APIMode)
	require.Equal(t, p.Headers, got.Headers)
	require.Equal(t, 32000, got.ContextWindow)

	for _, bad := range []ProviderProfile{
		{Name: "k", Headers: map[string]string{"authorization": "Bearer sk-1"}},
		{Name: "k", Headers: map[string]string{"x-api-key": "sk-1"}},
		{Name: "k", Proxy: "http://user:pw@proxy:1"},
		{Name: "k", BaseURL: "https://user:pw@api"},
		{Name: "k", APIMode: "grpc"},
		{Name: ""},
	} {
		require.ErrorIs(t, s.PutProviderProfile(ctx, bad), ErrInvalid, "%+v", bad)
	}
	list, err := s.ProviderProfiles(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.NoError(t, s.DeleteProviderProfile(ctx, "local"))
	require.ErrorIs(t, s.DeleteProviderProfile(ctx, "local"), ErrNotFound)

	require.NoError(t, s.PutAgent(ctx, AgentDef{Name: "reviewer", Prompt: "review", Model: "m"}))
	require.NoError(t, s.PutAgent(ctx, AgentDef{Name: "explore", Builtin: true}))
	agents, err := s.Agents(ctx)
	require.NoError(t, err)
	require.Len(t, agents, 2)
	require.Equal(t, "explore", agents[0].Name)
	require.True(t, agents[0].Builtin)
	require.NoError(t, s.DeleteAgent(ctx, "reviewer"))
	require.ErrorIs(t, s.DeleteAgent(ctx, "reviewer"), ErrNotFound)
}

func TestNoAPIKeyColumn(t *testing.T) {
	s := openTest(t)
	rows, err := s.rdb.Query("SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'")
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var table, col string
		require.NoError(t, rows.Scan(&table, &col))
		require.NotRegexp(t, `(?i)api_?key|secret|token|password|credential`, col, "table %s", table)
		n++
	}
	require.NoError(t, rows.Err())
	require.Greater(t, n, 20)
}

func TestClosedStore(t *testing.T) {
	s, err := Open(ctxT(t), t.TempDir(), Options{})
	require.NoError(t, err)
	ss := newSession(t, s)
	s.Enqueue(ss.ID, EventInput{Type: "a"}, nil)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "idempotent")
	_, err = s.Append(ctxT(t), ss.ID, EventInput{Type: "b"})
	require.ErrorIs(t, err, ErrClosed)
	done := make(chan error, 1)
	s.Enqueue(ss.ID, EventInput{Type: "c"}, func(_ Event, err error) { done <- err })
	require.ErrorIs(t, <-done, ErrClosed)

	// Close flushed the enqueued event.
	s2, err := Open(ctxT(t), s.Dir(), Options{})
	require.NoError(t, err)
	defer s2.Close()
	last, err := s2.LastSeq(ctxT(t), ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(1), last)
}

func TestVacuum(t *testing.T) {
	s := openTest(t)
	ss := newSession(t, s)
	for range 20 {
		_, err := s.Append(ctxT(t), ss.ID, EventInput{Type: "x"})
		require.NoError(t, err)
	}
	require.NoError(t, s.DeleteSession(ctxT(t), ss.ID))
	require.NoError(t, s.Vacuum(ctxT(t)))
	require.NoError(t, s.IntegrityCheck(ctxT(t)))
	ss2 := newSession(t, s)
	evs, err := s.Append(ctxT(t), ss2.ID, EventInput{Type: "x"})
	require.NoError(t, err)
	require.Equal(t, int64(1), evs[0].Seq)
}

func TestPanicInWriteIsAnError(t *testing.T) {
	s := openTest(t)
	ss := newSession(t, s)
	_, err := s.UpdateSession(ctxT(t), ss.ID, func(*Session) { panic("boom") })
	require.Contains(t, err.Error(), "boom")
	evs, err := s.Append(ctxT(t), ss.ID, EventInput{Type: "x"})
	require.NoError(t, err, "the writer survived")
	require.Equal(t, int64(1), evs[0].Seq)
}

func TestOneStorePerDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(ctxT(t), dir, Options{})
	require.NoError(t, err)
	_, err = Open(ctxT(t), dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	s, err = Open(ctxT(t), dir, Options{})
	require.NoError(t, err, "the lock is released by Close")
	require.NoError(t, s.Close())
}

func TestSessionState(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	ss := newSession(t, s)
	_, err := s.Append(ctx, ss.ID,
		EventInput{TurnID: "t1", Type: "iteration_end", History: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}},
		EventInput{TurnID: "t1", Type: "plan_proposed", Data: json.RawMessage(`{"plan":"p","requestId":"r9"}`),
			Pending: &PendingInput{RequestID: "r9", Kind: KindPlan}})
	require.NoError(t, err)
	st, err := s.SessionState(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.Session.LastSeq)
	require.Len(t, st.Messages, 1)
	require.Len(t, st.PendingRequests, 1)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var wire struct {
		PendingRequests []map[string]any `json:"pendingRequests"`
	}
	require.NoError(t, json.Unmarshal(b, &wire))
	for _, k := range []string{"requestId", "kind", "turnId", "data", "createdAt"} {
		_, ok := wire.PendingRequests[0][k]
		require.True(t, ok, "pendingRequests[0] has %q", k)
	}
	_, err = s.SessionState(ctx, "nope")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestOrphanSessionDirSwept(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(ctxT(t), dir, Options{})
	require.NoError(t, err)
	ss := newSession(t, s)
	require.NoError(t, os.MkdirAll(s.SessionDir(ss.ID), 0o700))
	orphan := s.SessionDir("gone-session")
	require.NoError(t, os.MkdirAll(filepath.Join(orphan, "attachments"), 0o700))
	require.NoError(t, s.Close())

	s, err = Open(ctxT(t), dir, Options{}) // as after a crash between commit and file removal
	require.NoError(t, err)
	defer s.Close()
	_, err = os.Stat(orphan)
	require.True(t, os.IsNotExist(err), "orphan folder removed")
	_, err = os.Stat(s.SessionDir(ss.ID))
	require.NoError(t, err, "a live session's folder stays")
}

// TestBoundedQueue: with the writer busy and the queue full, Append gives
// up when its ctx ends, and everything queued commits once the writer is
// free.
func TestBoundedQueue(t *testing.T) {
	s, err := Open(ctxT(t), t.TempDir(), Options{QueueSize: 1})
	require.NoError(t, err)
	defer s.Close()
	ss := newSession(t, s)
	release := make(chan struct{})
	started := make(chan struct{})
	go s.submitRaw(context.Background(), func(context.Context, *sql.Conn) error {
		close(started)
		<-release
		return nil
	})
	<-started
	s.Enqueue(ss.ID, EventInput{Type: "queued"}, nil) // fills the queue
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "late"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	require.NoError(t, s.Flush(ctxT(t)))
	evs := allEvents(t, s, ss.ID)
	require.Len(t, evs, 1)
	require.Equal(t, "queued", evs[0].Type)
}

// A checkpoint encodes only what changed, and what it stores is the same
// as without the cache, whatever changed: an appended message, a message
// rewritten in place (compaction), a shorter history.
func TestCheckpointCacheStoresTheSameHistory(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	sid := newSession(t, s).ID
	h := []llm.Message{{Role: llm.RoleUser, Content: "one"}, {Role: llm.RoleAssistant, Content: "two", ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Arguments: `{"path":"a"}`}}}}
	steps := [][]llm.Message{
		h,
		append(slices.Clone(h), llm.Message{Role: llm.RoleTool, ToolCallID: "c", Content: "three"}),
		{{Role: llm.RoleUser, Content: "summary", Notice: "compaction"}, h[1]},
		{h[1]},
		{{Role: llm.RoleAssistant, Content: "two", ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Arguments: `{"path":"b"}`}}}},
	}
	for i, want := range steps {
		_, err := s.Append(ctx, sid, EventInput{Type: "iteration_end", History: want})
		require.NoError(t, err)
		got, err := s.Messages(ctx, sid)
		require.NoError(t, err)
		require.Equal(t, want, got, "step %d", i)
	}
	// A tool call changed in place (same backing array) is seen as changed.
	last := steps[len(steps)-1]
	last[0].ToolCalls[0].Arguments = `{"path":"c"}`
	_, err := s.Append(ctx, sid, EventInput{Type: "iteration_end", History: last})
	require.NoError(t, err)
	got, err := s.Messages(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, `{"path":"c"}`, got[0].ToolCalls[0].Arguments)
}
