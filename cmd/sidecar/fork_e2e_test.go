package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2EFork: through the real binary and a real HTTP model endpoint, a
// session with two turns (the first writes a file with an always_tool
// grant) is forked at its first turn while a third turn runs. The fork's
// session.get has the first turn's history only, its session object
// forkedFrom, its title "… (fork)", its grants the source's (its own turn
// writes without asking); a replay of its log ends with the first turn's
// turn_end; its next model request (as the endpoint received it) sends the
// first turn's history and the new input, nothing of the second turn. The
// source is untouched, the workspace too (a file the user edited after the
// first turn keeps the user's edit). A running turn is refused with
// -32003, an unknown turn or session with -32002.
func TestE2EFork(t *testing.T) {
	f := newFakeModel(t,
		`call:write_file:{"path":"a.txt","content":"one"}`, "first done", // turn 1
		"second done", // turn 2
		"stall",       // turn 3, interrupted
		`call:write_file:{"path":"b.txt","content":"fork"}`, "fork answer", // the fork's turn
	)
	e := setupEnv(t, modelEnv(f), nil)

	t1, err := e.c.StartTurn(tctx(t), e.sid, "one")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "always_tool"}))
	untilType(t, e.c, e.sid, "turn_end")
	untilType(t, e.c, e.sid, "session_named") // the title, before the fork copies it
	a := filepath.Join(e.projDir, "a.txt")
	got, err := os.ReadFile(a)
	require.NoError(t, err)
	require.Equal(t, "one", string(got))
	require.NoError(t, os.WriteFile(a, []byte("edited by the user"), 0o644))

	_, err = e.c.StartTurn(tctx(t), e.sid, "two")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "turn_end")

	type view struct {
		Session  map[string]any     `json:"session"`
		Messages []protocol.Message `json:"messages"`
	}
	get := func(sid string) view {
		t.Helper()
		var v view
		require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &v))
		return v
	}
	before := get(e.sid)

	// A third turn runs (the endpoint holds it) while turn one forks.
	t3, err := e.c.StartTurn(tctx(t), e.sid, "three")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "llm_request")
	err = e.c.Call(tctx(t), "session.fork", map[string]any{"sessionId": e.sid, "turnId": t3}, nil)
	require.Equal(t, client.CodeConflict, client.Code(err), "%v", err)
	require.Contains(t, err.Error(), "has not finished")
	err = e.c.Call(tctx(t), "session.fork", map[string]any{"sessionId": e.sid, "turnId": "turn_unknown"}, nil)
	require.Equal(t, client.CodeNotFound, client.Code(err), "%v", err)
	err = e.c.Call(tctx(t), "session.fork", map[string]any{"sessionId": "nope"}, nil)
	require.Equal(t, client.CodeNotFound, client.Code(err), "%v", err)

	var forked struct {
		SessionID string         `json:"sessionId"`
		Session   map[string]any `json:"session"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.fork", map[string]any{"sessionId": e.sid, "turnId": t1}, &forked))
	fid := forked.SessionID
	require.NotEqual(t, e.sid, fid)
	require.Equal(t, map[string]any{"sessionId": e.sid, "turnId": t1}, forked.Session["forkedFrom"])
	require.Equal(t, "A fake name (fork)", forked.Session["title"])
	require.Equal(t, "idle", forked.Session["status"])
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	untilType(t, e.c, e.sid, "turn_end")

	// session.get and session.list show the fork as made.
	fv := get(fid)
	require.Equal(t, forked.Session["forkedFrom"], fv.Session["forkedFrom"])
	var list struct {
		Sessions []map[string]any `json:"sessions"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.list", map[string]string{"projectId": fv.Session["projectId"].(string)}, &list))
	require.Len(t, list.Sessions, 2)
	for _, s := range list.Sessions {
		if s["sessionId"] == fid {
			require.Equal(t, forked.Session["forkedFrom"], s["forkedFrom"])
		} else {
			require.NotContains(t, s, "forkedFrom")
		}
	}
	require.Equal(t, []string{"user:one", "assistant:", "tool:", "assistant:first done"}, summary(fv.Messages))
	require.Equal(t, "write_file", fv.Messages[1].ToolCalls[0].Name)
	require.Equal(t, before.Messages[:4], fv.Messages, "the first turn's history, as the source has it")

	// The grants are the source's.
	var grants protocol.SessionGrantsResult
	require.NoError(t, e.c.Call(tctx(t), "session.grants", map[string]string{"sessionId": fid}, &grants))
	require.Len(t, grants.Grants, 1)
	require.Equal(t, "write_file", grants.Grants[0].Name)

	// The source is untouched, and so is the workspace.
	after := get(e.sid)
	require.Equal(t, append(summary(before.Messages), "user:three"), summary(after.Messages)[:len(before.Messages)+1])
	require.Equal(t, before.Messages, after.Messages[:len(before.Messages)])
	require.NotContains(t, after.Session, "forkedFrom")
	require.Equal(t, "A fake name", after.Session["title"])
	got, err = os.ReadFile(a)
	require.NoError(t, err)
	require.Equal(t, "edited by the user", string(got), "a fork does not touch files")
	ents, err := os.ReadDir(e.projDir)
	require.NoError(t, err)
	var names []string
	for _, en := range ents {
		names = append(names, en.Name())
	}
	require.NotContains(t, names, "b.txt")

	// A replay of the fork's log is the first turn's events.
	fc := e.p.connect(t)
	sub, err := fc.Subscribe(tctx(t), fid, 0)
	require.NoError(t, err)
	var replay []client.Event
	for len(replay) == 0 || replay[len(replay)-1].Seq < sub.LastSeq {
		ev, err := fc.NextEvent(tctx(t), fid)
		require.NoError(t, err)
		replay = append(replay, ev)
	}
	require.Equal(t, "turn_end", replay[len(replay)-1].Type)
	for _, ev := range replay {
		require.Equal(t, t1, ev.TurnID, "only turn one's events: %s", ev.Type)
	}

	// The fork's next turn: the endpoint receives the first turn's history
	// and the new input; the copied grant lets write_file run unasked.
	sent := len(f.requests())
	_, err = fc.StartTurn(tctx(t), fid, "three in the fork")
	require.NoError(t, err)
	evs = untilType(t, fc, fid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "the copied always_tool grant")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	reqs := f.requests()
	require.Greater(t, len(reqs), sent)
	var body struct {
		Messages []struct {
			Role      string `json:"role"`
			Content   any    `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(reqs[sent], &body))
	var roles []string
	for _, m := range body.Messages {
		c, _ := m.Content.(string)
		if m.Role == "tool" || m.Role == "system" {
			c = ""
		}
		roles = append(roles, m.Role+":"+c)
	}
	require.Equal(t, []string{"system:", "user:one", "assistant:", "tool:", "assistant:first done", "user:three in the fork"}, roles)
	require.Equal(t, "write_file", body.Messages[2].ToolCalls[0].Function.Name)
	for _, r := range reqs[sent:] {
		require.NotContains(t, string(r), "second done")
		require.NotContains(t, string(r), `"two"`)
	}
	got, err = os.ReadFile(filepath.Join(e.projDir, "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "fork", string(got))
	got, err = os.ReadFile(a)
	require.NoError(t, err)
	require.Equal(t, "edited by the user", string(got))
}

// summary is role:content of each message (a tool's content left out).
func summary(msgs []protocol.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		c := m.Content
		if m.Role == "tool" {
			c = ""
		}
		out[i] = m.Role + ":" + strings.TrimSpace(c)
	}
	return out
}
