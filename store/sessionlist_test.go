package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// TestFTS5CompiledIn: the SQLite build has FTS5 (modernc ships it) and the
// store's session_text table is one.
func TestFTS5CompiledIn(t *testing.T) {
	s := openTest(t)
	var on int
	require.NoError(t, s.rdb.QueryRow("SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&on))
	require.Equal(t, 1, on, "SQLite built without FTS5")
	var n int
	require.NoError(t, s.rdb.QueryRow("SELECT count(*) FROM session_text WHERE session_text MATCH '\"x\"'").Scan(&n))
}

// projectWith creates a project and n sessions in it, oldest first.
func projectWith(t *testing.T, s *Store, n int) (string, []Session) {
	t.Helper()
	ctx := ctxT(t)
	p, err := s.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	out := make([]Session, n)
	for i := range out {
		out[i], err = s.CreateSession(ctx, Session{ProjectID: p.ID, Title: fmt.Sprintf("session %d", i)})
		require.NoError(t, err)
	}
	return p.ID, out
}

// setUpdated sets a session's updated_at (ms) through the writer.
func setUpdated(t *testing.T, s *Store, id string, ms int64) {
	t.Helper()
	require.NoError(t, s.write(ctxT(t), func(tx *wtx) error {
		_, err := tx.exec("UPDATE sessions SET updated_at = ? WHERE id = ?", ms, id)
		return err
	}))
}

// pageAll pages q through to the end, returning the ids in order.
func pageAll(t *testing.T, s *Store, q SessionQuery, between func(page int)) []string {
	t.Helper()
	var ids []string
	for page := 0; ; page++ {
		p, err := s.SessionPage(ctxT(t), q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Sessions), q.Limit)
		for _, h := range p.Sessions {
			ids = append(ids, h.ID)
		}
		if p.NextCursor == "" {
			return ids
		}
		require.Len(t, p.Sessions, q.Limit, "a page with a next cursor is full")
		q.Cursor = p.NextCursor
		if between != nil {
			between(page)
		}
		require.Less(t, page, 1000)
	}
}

// TestSessionPageEqualTimestamps: sessions with equal updated_at across
// page boundaries come once each, newest first then by creation (pk)
// descending, and a session created while paging shifts no page.
func TestSessionPageEqualTimestamps(t *testing.T) {
	s := openTest(t)
	pid, ss := projectWith(t, s, 23)
	// Groups of 7 share a timestamp: boundaries of pages of 5 fall inside them.
	for i, x := range ss {
		setUpdated(t, s, x.ID, 1_000_000+int64(i/7))
	}
	var want []string
	for i := len(ss) - 1; i >= 0; i-- {
		want = append(want, ss[i].ID)
	}
	for _, limit := range []int{1, 2, 5, 7, 22, 23, 24, 200} {
		got := pageAll(t, s, SessionQuery{ProjectID: pid, Limit: limit}, nil)
		require.Equal(t, want, got, "limit %d", limit)
	}
	// The old list's order is the same.
	all, err := s.Sessions(ctxT(t), pid)
	require.NoError(t, err)
	for i, x := range all {
		require.Equal(t, want[i], x.ID)
	}

	// Inserts while paging (each gets a newer updated_at): none is seen in
	// this pass, none repeats or skips an old one.
	var added []string
	got := pageAll(t, s, SessionQuery{ProjectID: pid, Limit: 4}, func(int) {
		n, err := s.CreateSession(ctxT(t), Session{ProjectID: pid})
		require.NoError(t, err)
		added = append(added, n.ID)
	})
	require.Equal(t, want, got)
	require.NotEmpty(t, added)
	first, err := s.SessionPage(ctxT(t), SessionQuery{ProjectID: pid, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, added[len(added)-1], first.Sessions[0].ID, "the newest comes first next time")
}

// TestSessionPageCursorRefused: a cursor that was altered, cut, made up, or
// issued for another project, filter or search is refused.
func TestSessionPageCursorRefused(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	pid, _ := projectWith(t, s, 6)
	other, _ := projectWith(t, s, 6)
	q := SessionQuery{ProjectID: pid, Limit: 2}
	p, err := s.SessionPage(ctx, q)
	require.NoError(t, err)
	c := p.NextCursor
	require.NotEmpty(t, c)
	q.Cursor = c
	_, err = s.SessionPage(ctx, q)
	require.NoError(t, err, "the cursor as issued")

	bad := []string{"x", "AAAA", strings.Repeat("A", 200), c[:len(c)-1], c + "A", "!" + c[1:], " " + c}
	for i := range c { // every one-character change
		r := []byte(c)
		if r[i] == 'A' {
			r[i] = 'B'
		} else {
			r[i] = 'A'
		}
		bad = append(bad, string(r))
	}
	for _, b := range bad {
		q.Cursor = b
		_, err := s.SessionPage(ctx, q)
		require.ErrorIs(t, err, ErrBadCursor, "cursor %q", b)
	}
	for name, fq := range map[string]SessionQuery{
		"other project": {ProjectID: other, Limit: 2},
		"archived":      {ProjectID: pid, Limit: 2, Archived: true},
		"a search":      {ProjectID: pid, Limit: 2, Search: "session"},
		"every project": {Limit: 2},
	} {
		fq.Cursor = c
		_, err := s.SessionPage(ctx, fq)
		require.ErrorIs(t, err, ErrBadCursor, name)
	}
	_, err = s.SessionPage(ctx, SessionQuery{ProjectID: pid})
	require.ErrorIs(t, err, ErrInvalid, "limit 0")
}

// checkpoint stores h as the session's history through the event path.
func checkpoint(t *testing.T, s *Store, sid string, h ...llm.Message) {
	t.Helper()
	_, err := s.Append(ctxT(t), sid, EventInput{Type: "iteration_end", History: h})
	require.NoError(t, err)
}

func search(t *testing.T, s *Store, pid, text string) []SessionHit {
	t.Helper()
	p, err := s.SessionPage(ctxT(t), SessionQuery{ProjectID: pid, Limit: 200, Search: text})
	require.NoError(t, err, "search %q", text)
	return p.Sessions
}

func hitIDs(hs []SessionHit) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// highlighted is the text of a snippet's highlights.
func highlighted(sn *Snippet) []string {
	u := utf16.Encode([]rune(sn.Text))
	out := []string{}
	for _, h := range sn.Highlights {
		out = append(out, string(utf16.Decode(u[h[0]:h[1]])))
	}
	return out
}

// TestSessionSearchHostileQueries: a query is plain text. FTS5 operators,
// quotes, column filters and stray punctuation neither error nor act: each
// finds the session whose message holds the same words.
func TestSessionSearchHostileQueries(t *testing.T) {
	s := openTest(t)
	pid, ss := projectWith(t, s, 2)
	checkpoint(t, s, ss[0].ID,
		llm.Message{Role: llm.RoleSystem, Content: "system prompt"},
		llm.Message{Role: llm.RoleUser, Content: `please grep for foo" OR bar* and NEAR( the {text}: col:zeta ^caret -minus`},
		llm.Message{Role: llm.RoleAssistant, Content: "Done. Café naïve ünïcödé 日本語テキスト 😀 emoji"})
	checkpoint(t, s, ss[1].ID, llm.Message{Role: llm.RoleUser, Content: "bar only here, nothing else"})

	hostile := []string{
		`foo" OR bar*`, `NEAR(`, `NEAR(foo bar)`, `"`, `""`, `"foo`, `foo"`, `*`, `foo*`, `^caret`, `-minus`,
		`col:zeta`, `text:foo`, `{text}:`, `{text}: foo`, `(`, `)`, `((foo))`, `AND`, `OR`, `NOT`, `foo AND`,
		`foo NOT bar`, `'`, `';--`, `\`, `+`, `foo +`, "foo\x00bar", "\t\n", `:`, `.`, `-`, `**`, `"*"`,
		`NEAR`, `foo NEAR/2 bar`, `café`, `CAFE`, `naive`, `日本語`, `😀`, `rowid:1`, `bm25(`, `a"b"c`,
		"\u200b", "foo\u00adbar", `%`, `_`, `[`, `]`, `||`, `&&`,
	}
	for _, q := range hostile {
		search(t, s, pid, q) // never an error
	}
	for q, want := range map[string][]string{
		`foo" OR bar*`:     {ss[0].ID}, // every word, not OR: bar alone is in ss[1]
		`NEAR(`:            {ss[0].ID},
		`{text}: col:zeta`: {ss[0].ID},
		`^caret -minus`:    {ss[0].ID},
		`bar`:              {ss[1].ID, ss[0].ID},
		`BAR*`:             {ss[1].ID, ss[0].ID},
		`cafe NAIVE`:       {ss[0].ID}, // case and diacritics folded
		`unicode`:          {ss[0].ID},
		`日本語`:              {ss[0].ID}, // a CJK run matches by its start
		`foo NOT bar`:      {},         // "not" is a word here, and no message has it
		`system prompt`:    {},         // the system prompt is not indexed
		`"`:                {},         // no word: nothing matches
		`gre`:              {ss[0].ID}, // a prefix
		`session 1`:        {ss[1].ID}, // titles are searched
	} {
		require.Equal(t, want, hitIDs(search(t, s, pid, q)), "query %q", q)
	}
	hits := search(t, s, pid, `foo" OR bar*`)
	require.Len(t, hits, 1)
	require.Contains(t, hits[0].Snippet.Text, "grep for foo")
	require.Equal(t, []string{"foo", "OR", "bar"}, highlighted(hits[0].Snippet))
	hits = search(t, s, pid, "session 1")
	require.Equal(t, "session 1", hits[0].Snippet.Text)
	require.Equal(t, []string{"session", "1"}, highlighted(hits[0].Snippet), "each word of a phrase")
	hits = search(t, s, pid, "emoji")
	require.Equal(t, []string{"emoji"}, highlighted(hits[0].Snippet), "UTF-16 offsets after an emoji")

	for _, q := range []string{strings.Repeat("a", MaxSearchQuery+1), strings.Repeat("a ", MaxSearchWords+1), "\xff"} {
		_, err := s.SessionPage(ctxT(t), SessionQuery{ProjectID: pid, Limit: 5, Search: q})
		require.ErrorIs(t, err, ErrInvalid)
	}
}

// TestSessionTextIndexFollowsWrites: the index follows checkpoints (new
// messages, a compaction that rewrites them), titles (created, renamed by
// the user or by an event) and deletes; tool output is not indexed.
func TestSessionTextIndexFollowsWrites(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	pid, ss := projectWith(t, s, 2)
	a := ss[0].ID
	require.Empty(t, search(t, s, pid, "zebra"))
	h := []llm.Message{{Role: llm.RoleUser, Content: "draw a zebra"}}
	checkpoint(t, s, a, h...)
	require.Equal(t, []string{a}, hitIDs(search(t, s, pid, "zebra")))
	h = append(h, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "shell", Arguments: `{"cmd":"giraffe"}`}}},
		llm.Message{Role: llm.RoleTool, Content: "giraffe output", ToolCallID: "c", Name: "shell"},
		llm.Message{Role: llm.RoleAssistant, Content: "here is the okapi"})
	checkpoint(t, s, a, h...)
	require.Equal(t, []string{a}, hitIDs(search(t, s, pid, "okapi")))
	require.Empty(t, search(t, s, pid, "giraffe"), "tool calls and output are not indexed")
	hits := search(t, s, pid, "okapi")
	require.Equal(t, "here is the okapi", hits[0].Snippet.Text)
	require.Equal(t, [][2]int{{12, 17}}, hits[0].Snippet.Highlights)

	// A compaction rewrites the history: the old words go, the summary's come.
	checkpoint(t, s, a, llm.Message{Role: llm.RoleUser, Content: "summary: a striped animal", Notice: "compaction"})
	require.Empty(t, search(t, s, pid, "zebra"))
	require.Empty(t, search(t, s, pid, "okapi"))
	require.Equal(t, []string{a}, hitIDs(search(t, s, pid, "striped")))

	// Titles: a rename, an event's title.
	require.Equal(t, []string{ss[1].ID}, hitIDs(search(t, s, pid, "session 1")))
	_, err := s.UpdateSession(ctx, ss[1].ID, func(x *Session) { x.Title, x.TitleSource = "Quarterly report", "user" })
	require.NoError(t, err)
	require.Empty(t, search(t, s, pid, "session 1"))
	require.Equal(t, []string{ss[1].ID}, hitIDs(search(t, s, pid, "quarterly")))
	_, err = s.Append(ctx, a, EventInput{Type: "session_titled", Title: &Title{Name: "Animal drawings", Source: "auto"}})
	require.NoError(t, err)
	require.Equal(t, []string{a}, hitIDs(search(t, s, pid, "drawings")))
	require.Empty(t, search(t, s, pid, "session 0"))

	// A delete removes every row of the session.
	var pk int64
	require.NoError(t, s.rdb.QueryRow("SELECT pk FROM sessions WHERE id = ?", a).Scan(&pk))
	require.NoError(t, s.DeleteSession(ctx, a))
	require.Empty(t, search(t, s, pid, "striped"))
	require.Empty(t, search(t, s, pid, "drawings"))
	var n int
	require.NoError(t, s.rdb.QueryRow("SELECT count(*) FROM session_text WHERE rowid BETWEEN ? AND ?", pk<<24, pk<<24+1<<24-1).Scan(&n))
	require.Zero(t, n)
}

// TestSessionArchive: archived sessions leave the default list and make
// up the archived one; unarchiving brings them back in their place.
func TestSessionArchive(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	pid, ss := projectWith(t, s, 4)
	checkpoint(t, s, ss[1].ID, llm.Message{Role: llm.RoleUser, Content: "archived words"})
	for i, x := range ss {
		setUpdated(t, s, x.ID, 1000+int64(i))
	}
	before, err := s.Session(ctx, ss[1].ID)
	require.NoError(t, err)
	got, err := s.SetArchived(ctx, ss[1].ID, true)
	require.NoError(t, err)
	require.True(t, got.Archived)
	require.Equal(t, before.UpdatedAt, got.UpdatedAt, "archiving does not move it")
	require.Equal(t, before.LastSeq, got.LastSeq)

	list := func(archived bool, search string) []string {
		p, err := s.SessionPage(ctx, SessionQuery{ProjectID: pid, Limit: 10, Archived: archived, Search: search})
		require.NoError(t, err)
		for _, h := range p.Sessions {
			require.Equal(t, archived, h.Archived)
		}
		return hitIDs(p.Sessions)
	}
	require.Equal(t, []string{ss[3].ID, ss[2].ID, ss[0].ID}, list(false, ""))
	require.Equal(t, []string{ss[1].ID}, list(true, ""))
	require.Empty(t, list(false, "archived"))
	require.Equal(t, []string{ss[1].ID}, list(true, "archived"))

	got, err = s.SetArchived(ctx, ss[1].ID, false)
	require.NoError(t, err)
	require.False(t, got.Archived)
	require.Equal(t, []string{ss[3].ID, ss[2].ID, ss[1].ID, ss[0].ID}, list(false, ""), "back in its place")
	require.Empty(t, list(true, ""))

	_, err = s.SetArchived(ctx, "nope", true)
	require.ErrorIs(t, err, ErrNotFound)
}

// TestMigrateIndexesExistingSessions: a version-6 file's titles and
// messages are searchable after the migration, and its sessions are not
// archived.
func TestMigrateIndexesExistingSessions(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	db, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBFile), defaultBusy, false))
	require.NoError(t, err)
	require.NoError(t, migrate(ctx, db, migrations[:6]))
	_, err = db.Exec(`INSERT INTO projects (id, path, created_at, opened_at) VALUES ('p1', '/w', 1, 1);
		INSERT INTO sessions (id, project_id, title, created_at, updated_at) VALUES ('s1', 'p1', 'Old title', 1, 1);
		INSERT INTO sessions (id, project_id, title, created_at, updated_at) VALUES ('s2', 'p1', '', 1, 2);
		INSERT INTO messages (session_pk, idx, data) VALUES
			(2, 0, '{"role":"system","content":"hidden system"}'),
			(2, 1, '{"role":"user","content":"migrated message text"}'),
			(2, 2, '{"role":"tool","content":"tool text"}'),
			(2, 3, 'not json');`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, []string{"s1"}, hitIDs(search(t, s, "p1", "old title")))
	require.Equal(t, []string{"s2"}, hitIDs(search(t, s, "p1", "migrated")))
	require.Empty(t, search(t, s, "p1", "hidden"))
	require.Empty(t, search(t, s, "p1", "tool"))
	p, err := s.SessionPage(ctx, SessionQuery{ProjectID: "p1", Limit: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"s2", "s1"}, hitIDs(p.Sessions))
}

// FuzzFTSQuery: whatever a user types, the translated query runs on a
// real FTS5 table without an error, or is refused as too long.
func FuzzFTSQuery(f *testing.F) {
	for _, seed := range []string{`foo" OR bar*`, `NEAR(`, `"`, `a:b`, `{text}: x`, `^x`, `-x`, `日本語`, "\x00", "a\u0301",
		`x AND y OR NOT z`, `(((`, `*"*"*`, "\U0001F600", "\u0e01\u0e34", "\uf8ff"} {
		f.Add(seed)
	}
	s, err := Open(context.Background(), f.TempDir(), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	ss := newSession(f, s)
	if _, err := s.Append(context.Background(), ss.ID, EventInput{Type: "iteration_end", History: []llm.Message{
		{Role: llm.RoleUser, Content: `foo" OR bar* NEAR( 日本語 café x y z`}}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		match, searching, err := FTSQuery(q)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			return
		}
		require.Equal(t, strings.TrimSpace(q) != "", searching)
		if match == "" {
			return
		}
		var n int
		require.NoError(t, s.rdb.QueryRow("SELECT count(*) FROM session_text WHERE session_text MATCH ?", match).Scan(&n), "query %q as %q", q, match)
		_, err = s.SessionPage(context.Background(), SessionQuery{ProjectID: ss.ProjectID, Limit: 3, Search: q})
		require.NoError(t, err)
	})
}

// TestForkIsSearchable: a fork (ForkSession copies rows in SQL) is in the
// full-text index with its own title and the history it got, no more.
func TestForkIsSearchable(t *testing.T) {
	ctx := ctxT(t)
	s := openTest(t)
	ss := newSession(t, s)
	twoTurns(t, s, ss)
	fork, _, err := s.ForkSession(ctx, ForkInput{SourceID: ss.ID, TurnID: "t1", Title: "Branch (fork)",
		Usage: func([]byte) (json.RawMessage, int64) { return nil, 0 }})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{ss.ID, fork.ID}, hitIDs(search(t, s, ss.ProjectID, "first")))
	require.Equal(t, []string{ss.ID}, hitIDs(search(t, s, ss.ProjectID, "second")), "the fork stops at t1")
	require.Equal(t, []string{fork.ID}, hitIDs(search(t, s, ss.ProjectID, "branch")))
}
