package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Sessions at scale: a keyset-paged list of a project's sessions, newest
// first, that can be narrowed to archived ones or to those whose title or
// message text matches a search.
//
// Order: updated_at DESC, pk DESC (Sessions' order; updated_at moves on
// every event, rename and setting). A page's cursor is the (updated_at, pk)
// of its last row, so rows inserted or updated while a client pages never
// repeat or shift a page: a session created or updated meanwhile moves to
// the top and is seen by the next listing from the start, not by this pass.
//
// Search: session_text is an FTS5 table (unicode61, diacritics removed)
// holding each session's title (rowid pk<<24) and the content of each user
// and assistant message of its checkpointed history (rowid pk<<24 + idx+1).
// Triggers on sessions and messages keep it current in the writing
// transaction wherever those rows change (checkpoints, compaction, renames,
// deletes, and any later writer), so it never disagrees with the history.
// Tool output, reasoning and the system prompt are not indexed. A user's
// query is never FTS5 syntax: it is cut into words (runs of letters and
// digits), each whitespace-separated chunk becoming one quoted phrase that
// must appear, matched as a prefix ("refac" finds "refactoring").

// sessionTextMigration is migration 8 (see migrations).
const sessionTextMigration = `
ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
DROP INDEX sessions_by_project;
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
INSERT INTO session_text(rowid, text) SELECT pk * 16777216, title FROM sessions WHERE title <> '';
INSERT INTO session_text(rowid, text)
	SELECT session_pk * 16777216 + idx + 1, c FROM (SELECT session_pk, idx, CASE
		WHEN idx BETWEEN 0 AND 16777214 AND json_valid(data) AND json_extract(data, '$.role') IN ('user', 'assistant')
		THEN json_extract(data, '$.content') END AS c FROM messages)
	WHERE typeof(c) = 'text' AND c <> '';
`

// MaxSearchQuery bounds a search's text (bytes) and MaxSearchWords its
// words: a longer query is refused rather than run.
const (
	MaxSearchQuery = 1000
	MaxSearchWords = 32
)

// ErrBadCursor: a session list cursor that this store did not issue for
// the same project, filter and query (tampered with, foreign, or from an
// earlier run of the sidecar).
var ErrBadCursor = errors.New("bad cursor")

// SessionQuery selects a page of sessions.
type SessionQuery struct {
	// ProjectID is the project ("" = every session).
	ProjectID string
	// Limit is the page size (at least 1).
	Limit int
	// Cursor is a NextCursor of an earlier page of the same query; ""
	// starts from the newest.
	Cursor string
	// Search, when not blank, keeps the sessions whose title or message
	// text has every word of it (see the file comment); each hit has a
	// Snippet.
	Search string
	// Archived selects archived sessions (true) or the others (false).
	Archived bool
}

// SessionHit is a session of a page, with the text that matched a search.
type SessionHit struct {
	Session
	// Snippet is the best-matching passage of a search hit, nil without a
	// search.
	Snippet *Snippet
}

// Snippet is a passage of a title or message around the words that
// matched; "…" marks where it was cut.
type Snippet struct {
	Text string
	// Highlights are the matched words as [start, end) offsets into Text
	// in UTF-16 code units (what JavaScript strings index).
	Highlights [][2]int
}

// SessionPage is one page of sessions.
type SessionPage struct {
	Sessions []SessionHit
	// NextCursor continues after the last session; "" on the last page.
	NextCursor string
}

// SessionPage returns a page of sessions, newest first (see the file
// comment for the order and what a search matches).
func (s *Store) SessionPage(ctx context.Context, q SessionQuery) (SessionPage, error) {
	if q.Limit < 1 {
		return SessionPage{}, fmt.Errorf("session page: %w: limit %d", ErrInvalid, q.Limit)
	}
	match, searching, err := FTSQuery(q.Search)
	if err != nil {
		return SessionPage{}, fmt.Errorf("session page: %w", err)
	}
	filter := cursorFilter(q, match)
	from := "sessions"
	var args []any
	if searching {
		if match == "" { // words that cannot match anything
			return SessionPage{Sessions: []SessionHit{}}, nil
		}
		// One pass over the matches: each matching session with its first
		// matching row (its title, else its earliest message), whose
		// snippet the page shows.
		// The matches lead (CROSS JOIN): with sessions first, SQLite ran
		// the match again for every session.
		from = `(SELECT rowid >> 24 AS hit_pk, min(rowid) AS hit_row FROM session_text
			WHERE session_text MATCH ? GROUP BY 1) CROSS JOIN sessions ON pk = hit_pk`
		args = append(args, match)
	}
	where := []string{"archived = ?"}
	args = append(args, q.Archived)
	if q.ProjectID != "" {
		where = append(where, "project_id = ?")
		args = append(args, q.ProjectID)
	}
	if q.Cursor != "" {
		updated, pk, err := decodeCursor(q.Cursor, filter)
		if err != nil {
			return SessionPage{}, fmt.Errorf("session page: %w", err)
		}
		where = append(where, "(updated_at < ? OR (updated_at = ? AND pk < ?))")
		args = append(args, updated, updated, pk)
	}
	args = append(args, q.Limit+1)
	hitRow := "0"
	if searching {
		hitRow = "hit_row"
	}
	rows, err := s.rdb.QueryContext(ctx, "SELECT pk, "+hitRow+", "+sessionCols+" FROM "+from+" WHERE "+
		strings.Join(where, " AND ")+" ORDER BY updated_at DESC, pk DESC LIMIT ?", args...)
	if err != nil {
		return SessionPage{}, fmt.Errorf("session page: %w", err)
	}
	defer rows.Close()
	page := SessionPage{Sessions: []SessionHit{}}
	var pks, hits []int64
	for rows.Next() {
		var pk, hit int64
		ss, err := scanSession(prefixScanner{rows, []any{&pk, &hit}})
		if err != nil {
			return SessionPage{}, fmt.Errorf("session page: %w", err)
		}
		page.Sessions = append(page.Sessions, SessionHit{Session: ss})
		pks, hits = append(pks, pk), append(hits, hit)
	}
	if err := rows.Err(); err != nil {
		return SessionPage{}, fmt.Errorf("session page: %w", err)
	}
	rows.Close()
	if len(page.Sessions) > q.Limit {
		page.Sessions, pks, hits = page.Sessions[:q.Limit], pks[:q.Limit], hits[:q.Limit]
		last := page.Sessions[q.Limit-1]
		page.NextCursor = encodeCursor(last.UpdatedAt.UnixMilli(), pks[q.Limit-1], filter)
	}
	if searching {
		sns, err := s.snippets(ctx, match, hits)
		if err != nil {
			return SessionPage{}, fmt.Errorf("session page: %w", err)
		}
		for i, h := range hits {
			sn, ok := sns[h]
			if !ok { // rewritten since the page was read
				sn = Snippet{Highlights: [][2]int{}}
			}
			page.Sessions[i].Snippet = &sn
		}
	}
	return page, nil
}

// snippets returns the snippets of the rows (session_text rowids) in
// one more pass over the matches: the rowid test is kept from FTS5 (the
// unary +), which would run the whole query once per row, and the
// snippet is made only for the rows asked.
func (s *Store) snippets(ctx context.Context, match string, rowids []int64) (map[int64]Snippet, error) {
	out := make(map[int64]Snippet, len(rowids))
	if len(rowids) == 0 {
		return out, nil
	}
	ids := make([]string, len(rowids))
	for i, r := range rowids {
		ids[i] = strconv.FormatInt(r, 10)
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT rowid, snippet(session_text, 0, char(2), char(3), '…', 16)
		FROM session_text WHERE session_text MATCH ? AND +rowid IN (SELECT value FROM json_each(?))`,
		match, "["+strings.Join(ids, ",")+"]")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r int64
		var raw string
		if err := rows.Scan(&r, &raw); err != nil {
			return nil, err
		}
		out[r] = parseSnippet(raw)
	}
	return out, rows.Err()
}

// parseSnippet turns FTS5's snippet, its matches between \x02 and \x03,
// into text and UTF-16 ranges. A stray marker (one the message itself
// held) is dropped.
func parseSnippet(raw string) Snippet {
	var b strings.Builder
	sn := Snippet{Highlights: [][2]int{}}
	pos, start := 0, -1
	for _, r := range raw {
		switch r {
		case '\x02':
			start = pos
		case '\x03':
			if start >= 0 && pos > start {
				sn.Highlights = append(sn.Highlights, [2]int{start, pos})
			}
			start = -1
		default:
			b.WriteRune(r) // ranging over a string yields no surrogate: RuneLen is 1 or 2
			pos += utf16.RuneLen(r)
		}
	}
	sn.Text = b.String()
	return sn
}

// FTSQuery translates a user's search text into an FTS5 query that is
// never FTS5 syntax: each whitespace-separated chunk's words (runs of
// letters and digits) become one quoted prefix phrase, and every phrase
// must match. searching is false for blank text (no search); match is ""
// when the text has no word (it matches nothing). Text over MaxSearchQuery
// bytes or MaxSearchWords words is refused (ErrInvalid).
func FTSQuery(text string) (match string, searching bool, err error) {
	if strings.TrimSpace(text) == "" {
		return "", false, nil
	}
	if len(text) > MaxSearchQuery {
		return "", true, fmt.Errorf("%w: query longer than %d bytes", ErrInvalid, MaxSearchQuery)
	}
	if !utf8.ValidString(text) {
		return "", true, fmt.Errorf("%w: query is not UTF-8", ErrInvalid)
	}
	var phrases []string
	words := 0
	for _, chunk := range strings.Fields(text) {
		ws := strings.FieldsFunc(chunk, func(r rune) bool { return !isWordRune(r) })
		if len(ws) == 0 {
			continue
		}
		words += len(ws)
		if words > MaxSearchWords {
			return "", true, fmt.Errorf("%w: query has more than %d words", ErrInvalid, MaxSearchWords)
		}
		// Words hold only letters and digits: no quote, operator or
		// column filter can reach FTS5.
		phrases = append(phrases, `"`+strings.Join(ws, " ")+`"*`)
	}
	return strings.Join(phrases, " "), true, nil
}

// isWordRune: the characters unicode61 keeps in tokens (categories L*, N*
// and Co), and the marks it folds away.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mn, r)
}

// cursorKey signs cursors; a new one each run, so a cursor outlives
// neither the process nor its query.
var cursorKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand panics instead)
	return k
}()

const cursorVersion = 1

// cursorFilter is what a cursor is valid for: the project, the archive
// filter and the translated search.
func cursorFilter(q SessionQuery, match string) string {
	return q.ProjectID + "\x00" + strconv.FormatBool(q.Archived) + "\x00" + match
}

// encodeCursor is version, updated_at, pk (varints) and an HMAC-SHA256
// (16 bytes) over them and the filter, in unpadded base64url.
func encodeCursor(updated, pk int64, filter string) string {
	b := []byte{cursorVersion}
	b = binary.AppendVarint(b, updated)
	b = binary.AppendVarint(b, pk)
	return base64.RawURLEncoding.EncodeToString(append(b, cursorMAC(b, filter)...))
}

func cursorMAC(body []byte, filter string) []byte {
	m := hmac.New(sha256.New, cursorKey)
	m.Write(body)
	m.Write([]byte{0})
	m.Write([]byte(filter))
	return m.Sum(nil)[:16]
}

func decodeCursor(c, filter string) (updated, pk int64, err error) {
	bad := fmt.Errorf("%w: not a cursor of this list (start again without one)", ErrBadCursor)
	if len(c) > 128 {
		return 0, 0, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < 1+16 || b[0] != cursorVersion {
		return 0, 0, bad
	}
	body, mac := b[:len(b)-16], b[len(b)-16:]
	if !hmac.Equal(mac, cursorMAC(body, filter)) {
		return 0, 0, bad
	}
	rest := body[1:]
	updated, n := binary.Varint(rest)
	if n <= 0 {
		return 0, 0, bad
	}
	pk, m := binary.Varint(rest[n:])
	if m <= 0 || n+m != len(rest) {
		return 0, 0, bad
	}
	return updated, pk, nil
}

// prefixScanner scans the first columns into pre, the rest into dest.
type prefixScanner struct {
	r   scanner
	pre []any
}

func (p prefixScanner) Scan(dest ...any) error { return p.r.Scan(append(p.pre, dest...)...) }

// SetArchived archives or unarchives a session and returns it; updated_at
// is kept (archiving does not move a session in the list).
func (s *Store) SetArchived(ctx context.Context, id string, archived bool) (Session, error) {
	var out Session
	err := s.write(ctx, func(t *wtx) error {
		res, err := t.exec("UPDATE sessions SET archived = ? WHERE id = ?", archived, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return refuse(fmt.Errorf("session %q: %w", id, ErrNotFound))
		}
		out, err = scanSession(t.queryRow("SELECT "+sessionCols+" FROM sessions WHERE id = ?", id))
		if err != nil {
			return err
		}
		if st := t.touched[id]; st != nil {
			out.LastSeq = st.lastSeq // not yet flushed in this batch
		}
		return nil
	})
	if err != nil {
		return Session{}, fmt.Errorf("archive session: %w", err)
	}
	return out, nil
}
