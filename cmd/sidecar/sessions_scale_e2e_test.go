package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2ESessionsAtScale: over the wire of the real binary, 120 sessions
// page through session.list in pages of 25 (each once, newest first, the
// last page without nextCursor); a bad limit or a tampered or foreign
// cursor is -32602; a search finds a word of a model's answer, of a user's
// message and of a title, with a snippet whose highlight is the word, and
// a hostile query is plain text; session.archive is refused while a turn
// runs, then moves the session from the default list (and its search) to
// the archived one, and session.unarchive brings it back.
func TestE2ESessionsAtScale(t *testing.T) {
	script, gates := gatedScript(t,
		map[string]any{"text": "Here is the zanzibar plan you asked for."},
		map[string]any{"text": "still thinking", "gate": "hold"})
	e := setup(t, script, nil)
	pid, err := e.c.OpenProject(tctx(t), e.projDir) // open already: its id
	require.NoError(t, err)
	_, err = e.c.StartTurn(tctx(t), e.sid, "write me a marmalade recipe")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "turn_end")

	for i := range 119 {
		extra := map[string]any{}
		if i == 60 {
			extra["title"] = "Quarterly budget review"
		}
		_, err := e.c.CreateSession(tctx(t), pid, extra)
		require.NoError(t, err)
	}

	list := func(params map[string]any) protocol.SessionListResult {
		t.Helper()
		params["projectId"] = pid
		var res protocol.SessionListResult
		require.NoError(t, e.c.Call(tctx(t), "session.list", params, &res))
		return res
	}
	var ids []string
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		params := map[string]any{"limit": 25}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := list(params)
		for i, s := range res.Sessions {
			require.False(t, seen[s.SessionID], "session %s twice", s.SessionID)
			seen[s.SessionID] = true
			ids = append(ids, s.SessionID)
			require.False(t, s.Archived)
			require.Nil(t, s.Snippet, "no snippet without a query")
			if i > 0 {
				require.False(t, s.UpdatedAt.After(res.Sessions[i-1].UpdatedAt), "newest first")
			}
		}
		if res.NextCursor == "" {
			require.Equal(t, 4, pages, "120 sessions in pages of 25: the fifth is the last")
			require.Len(t, res.Sessions, 20)
			break
		}
		require.Len(t, res.Sessions, 25)
		cursor = res.NextCursor
	}
	require.Len(t, ids, 120)
	require.Equal(t, e.sid, ids[len(ids)-1], "the first session is the oldest")
	require.Len(t, list(map[string]any{}).Sessions, 50, "the default page is 50")

	invalid := func(params map[string]any, field string) {
		t.Helper()
		params["projectId"] = pid
		err := e.c.Call(tctx(t), "session.list", params, nil)
		var we *client.Error
		require.True(t, errors.As(err, &we), "%v", err)
		require.Equal(t, client.CodeInvalidParams, we.Code, "%v", err)
		require.Contains(t, we.Message, field)
	}
	invalid(map[string]any{"limit": 0}, "limit")
	invalid(map[string]any{"limit": 201}, "limit")
	invalid(map[string]any{"limit": -1}, "limit")
	first := list(map[string]any{"limit": 2})
	c := []byte(first.NextCursor)
	c[len(c)/2] ^= 1
	invalid(map[string]any{"cursor": string(c)}, "cursor")
	invalid(map[string]any{"cursor": "not-a-cursor"}, "cursor")
	invalid(map[string]any{"cursor": first.NextCursor, "archived": true}, "cursor")
	invalid(map[string]any{"cursor": first.NextCursor, "query": "zanzibar"}, "cursor")
	invalid(map[string]any{"query": strings.Repeat("x ", 40)}, "query")

	search := func(q string, archived bool) []protocol.Session {
		t.Helper()
		return list(map[string]any{"query": q, "archived": archived}).Sessions
	}
	highlights := func(sn *protocol.SessionSnippet) []string {
		u := utf16.Encode([]rune(sn.Text))
		out := []string{}
		for _, h := range sn.Highlights {
			out = append(out, string(utf16.Decode(u[h[0]:h[1]])))
		}
		return out
	}
	hits := search("zanzibar", false)
	require.Len(t, hits, 1)
	require.Equal(t, e.sid, hits[0].SessionID)
	require.NotNil(t, hits[0].Snippet)
	require.Contains(t, hits[0].Snippet.Text, "zanzibar plan")
	require.Equal(t, []string{"zanzibar"}, highlights(hits[0].Snippet))
	hits = search("MARMA", false) // a prefix, any case, of the user's words
	require.Len(t, hits, 1)
	require.Equal(t, []string{"marmalade"}, highlights(hits[0].Snippet))
	hits = search("budget", false)
	require.Len(t, hits, 1)
	require.Equal(t, "Quarterly budget review", hits[0].Snippet.Text)
	require.Len(t, search(`zanzibar" (plan* ^asked: {you}:`, false), 1, "FTS5 syntax is plain text: its words must appear")
	require.Empty(t, search(`zanzibar OR nonexistentword`, false), "OR is a word, not an operator")
	require.Empty(t, search(`"`, false))

	// A turn held at the model: archive is refused while it runs.
	_, err = e.c.StartTurn(tctx(t), e.sid, "and another")
	require.NoError(t, err)
	waitFile(t, filepath.Join(gates, "hold.reached"))
	err = e.c.Call(tctx(t), "session.archive", map[string]any{"sessionId": e.sid}, nil)
	var we *client.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeConflict, we.Code)
	require.Equal(t, protocol.KindBusy, we.Data.Kind)
	require.NoError(t, os.WriteFile(filepath.Join(gates, "hold.open"), nil, 0o600))
	untilType(t, e.c, e.sid, "turn_end")

	var s protocol.Session
	require.NoError(t, e.c.Call(tctx(t), "session.archive", map[string]any{"sessionId": e.sid}, &s))
	require.True(t, s.Archived)
	require.Empty(t, search("zanzibar", false), "an archived session leaves the default search")
	require.Len(t, search("zanzibar", true), 1)
	archived := list(map[string]any{"archived": true})
	require.Len(t, archived.Sessions, 1)
	require.Equal(t, e.sid, archived.Sessions[0].SessionID)
	require.True(t, archived.Sessions[0].Archived)
	var all []string
	for cursor := ""; ; {
		res := list(map[string]any{"limit": 200, "cursor": cursor})
		for _, s := range res.Sessions {
			all = append(all, s.SessionID)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	require.Len(t, all, 119)
	require.NotContains(t, all, e.sid)
	var g protocol.SessionGetResult
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]any{"sessionId": e.sid}, &g))
	require.True(t, g.Session.Archived, "session.get shows it")

	require.NoError(t, e.c.Call(tctx(t), "session.unarchive", map[string]any{"sessionId": e.sid}, &s))
	require.False(t, s.Archived)
	require.Len(t, search("zanzibar", false), 1)
	require.Empty(t, list(map[string]any{"archived": true}).Sessions)
	for _, m := range []string{"session.archive", "session.unarchive"} {
		err = e.c.Call(tctx(t), m, map[string]any{"sessionId": "no-such-session"}, nil)
		require.Equal(t, client.CodeNotFound, client.Code(err), m)
	}
}

// TestE2EACPListHonoursArchive: `sidecar acp`'s session/list lists every
// session of the project over more than one session.list page (205), and
// leaves out the one the app archived.
func TestE2EACPListHonoursArchive(t *testing.T) {
	e := setup(t, writeScript(t), nil)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	want := []string{e.sid}
	for range 204 {
		sid, err := e.c.CreateSession(tctx(t), pid, nil)
		require.NoError(t, err)
		want = append(want, sid)
	}
	archived := want[100]
	require.NoError(t, e.c.Call(tctx(t), "session.archive", map[string]any{"sessionId": archived}, nil))
	a := spawnACP(t, e.dataDir)
	list, err := a.conn.ListSessions(tctx(t), sdk.ListSessionsRequest{Cwd: sdk.Ptr(e.projDir)})
	require.NoError(t, err)
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, string(s.SessionId))
	}
	require.Len(t, ids, 204)
	require.NotContains(t, ids, archived)
	require.ElementsMatch(t, append(want[:100:100], want[101:]...), ids)
	require.True(t, a.stop(t), "sidecar acp exits cleanly: %s", a.stderr.String())
}
