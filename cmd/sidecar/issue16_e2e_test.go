package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// The manual's turn_end.produced_files lists every file the turn wrote or
// created, including those written by apply_patch and apply_unified_diff,
// whose paths live inside the patch text.
func TestE2EProducedFilesIncludePatchTools(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: added.txt\n+hello\n*** End Patch\n"
	unified := "--- /dev/null\n+++ b/unified.txt\n@@ -0,0 +1 @@\n+from a diff\n"
	script := writeScript(t,
		calls("",
			toolCall("c1", "write_file", map[string]any{"path": "written.txt", "content": "x\n"}),
			toolCall("c2", "apply_patch", map[string]any{"patch": patch}),
			toolCall("c3", "apply_unified_diff", map[string]any{"diff": unified}),
		),
		text("done"),
	)
	e := setup(t, script, map[string]any{"mode": "auto"})
	_, err := e.c.StartTurn(tctx(t), e.sid, "write three files")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	for _, ev := range ofType(evs, "tool_finished") {
		require.Equal(t, "ok", dataOf(t, ev)["status"], string(ev.Data))
	}
	for _, f := range []string{"written.txt", "added.txt", "unified.txt"} {
		_, err := os.Stat(filepath.Join(e.projDir, f))
		require.NoError(t, err)
	}
	end := dataOf(t, evs[len(evs)-1])
	require.ElementsMatch(t, []any{"written.txt", "added.txt", "unified.txt"}, end["produced_files"])
}

// interrupted carries the reqId of the model request it cut short, and the
// summary request of a compaction is announced by llm_request {compact: true}.
func TestE2EEventsCarryTheirFields(t *testing.T) {
	script := writeScript(t,
		map[string]any{"text": "waiting", "stall": true},
		text("first answer "+strings.Repeat("and more words ", 400)),
		calls("", toolCall("c1", "list_files", map[string]any{"path": "."})),
		map[string]any{"err": "This model's maximum context length is 8192 tokens", "errKind": "context_overflow"},
		text("fits now"),
	)
	// Chat answers the compaction summary.
	b, err := os.ReadFile(script)
	require.NoError(t, err)
	b = append(b[:len(b)-1], []byte(`,"chat":["summary of the earlier turns"]}`)...)
	require.NoError(t, os.WriteFile(script, b, 0o600))
	e := setup(t, script, map[string]any{"mode": "auto"})

	_, err = e.c.StartTurn(tctx(t), e.sid, "stall")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "llm_request")
	reqID := dataOf(t, evs[len(evs)-1])["reqId"].(string)
	require.NotEmpty(t, reqID)
	// Interrupt once the model streams: an interrupt that lands before the
	// scripted provider takes its response leaves the stall for the next
	// turn (a race of the test, seen under load).
	untilType(t, e.c, e.sid, "assistant_delta")
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	evs = untilType(t, e.c, e.sid, "turn_end")
	intr := ofType(evs, "interrupted")
	require.Len(t, intr, 1)
	require.Equal(t, reqID, dataOf(t, intr[0])["reqId"])

	var long strings.Builder
	for i := 0; long.Len() < 12000; i++ {
		fmt.Fprintf(&long, "line%d value%d ", i, (i*7919)%100000)
	}
	for _, in := range []string{long.String(), "list and overflow"} {
		_, err = e.c.StartTurn(tctx(t), e.sid, in)
		require.NoError(t, err)
		evs = untilType(t, e.c, e.sid, "turn_end")
	}
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"], string(evs[len(evs)-1].Data))
	require.NotEmpty(t, ofType(evs, "compacted"))
	var compact []map[string]any
	for _, ev := range ofType(evs, "llm_request") {
		if d := dataOf(t, ev); d["compact"] == true {
			compact = append(compact, d)
		}
	}
	require.Len(t, compact, 1, "the summary request is announced")
	require.NotEmpty(t, compact[0]["reqId"])
	require.Equal(t, evs[0].TurnID, compact[0]["taskId"])
}

// request.respond refuses an answer of another kind's shape, and
// always_command where permission_required did not offer it; the card says
// what always_command covers or why it is not offered.
func TestE2ERespondChecksTheAnswerShape(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("q1", "ask_user", map[string]any{"question": "Which color?", "options": []string{"red", "blue"}})),
		text("asked"),
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo hello > f.txt"})),
		text("redirected"),
		calls("", toolCall("c2", "write_file", map[string]any{"path": "w.txt", "content": "w\n"})),
		text("written"),
		calls("", toolCall("c3", "run_shell", map[string]any{"command": "touch t.txt"})),
		text("touched"),
	)
	e := setup(t, script, nil)
	respondErr := func(rid string, resp any, wantInMsg string) {
		t.Helper()
		err := e.c.Respond(tctx(t), e.sid, rid, resp)
		require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v", err)
		require.Contains(t, err.Error(), wantInMsg)
	}

	_, err := e.c.StartTurn(tctx(t), e.sid, "ask")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "ask_user_question")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	respondErr(rid, map[string]string{"outcome": "once"}, "response.outcome")
	respondErr(rid, map[string]any{}, "response.answer")
	respondErr(rid, map[string]any{"answer": 3}, "answer")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"answer": "blue"}))
	evs = untilType(t, e.c, e.sid, "turn_end")
	require.Contains(t, dataOf(t, ofType(evs, "tool_finished")[0])["result_preview"], "blue")

	// A command with a redirect: no command grant is offered, and the card
	// says so.
	_, err = e.c.StartTurn(tctx(t), e.sid, "redirect")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "permission_required")
	perm := dataOf(t, evs[len(evs)-1])
	require.Contains(t, perm, "command")
	require.Equal(t, "", perm["command"])
	require.Equal(t, false, perm["alwaysCommand"])
	require.Contains(t, perm["alwaysCommandNote"], "redirects")
	rid = perm["requestId"].(string)
	respondErr(rid, map[string]string{"outcome": "always_command"}, "always_command is not offered")
	respondErr(rid, map[string]any{"answer": "yes"}, "response.answer")
	respondErr(rid, json.RawMessage(`{"outcome":"once","Outcome":"deny"}`), "case")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	untilType(t, e.c, e.sid, "turn_end")

	// Not a shell command at all.
	_, err = e.c.StartTurn(tctx(t), e.sid, "write")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "permission_required")
	perm = dataOf(t, evs[len(evs)-1])
	require.Equal(t, false, perm["alwaysCommand"])
	require.Contains(t, perm["alwaysCommandNote"], "not a shell command")
	respondErr(perm["requestId"].(string), map[string]string{"outcome": "always_command"}, "not a shell command")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, perm["requestId"].(string), map[string]string{"outcome": "deny"}))
	untilType(t, e.c, e.sid, "turn_end")

	// A simple command: the card names what the grant covers.
	_, err = e.c.StartTurn(tctx(t), e.sid, "touch")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "permission_required")
	perm = dataOf(t, evs[len(evs)-1])
	require.Equal(t, "touch", perm["command"])
	require.Equal(t, true, perm["alwaysCommand"])
	require.NoError(t, e.c.Respond(tctx(t), e.sid, perm["requestId"].(string), map[string]string{"outcome": "always_command"}))
	untilType(t, e.c, e.sid, "turn_end")
}

// session.grants lists the session's always_tool and always_command grants
// with when they were given; session.revokeGrant takes one back, live and
// after a restart.
func TestE2EGrantsVisibleAndRevocable(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "touch a.txt"})),
		text("touched"),
		calls("", toolCall("c2", "write_file", map[string]any{"path": "w.txt", "content": "w\n"})),
		text("written"),
		calls("", toolCall("c3", "run_shell", map[string]any{"command": "touch b.txt"})),
		text("asked again"),
	)
	e := setup(t, script, nil)
	answer := func(in, outcome string) {
		t.Helper()
		_, err := e.c.StartTurn(tctx(t), e.sid, in)
		require.NoError(t, err)
		evs := untilType(t, e.c, e.sid, "permission_required")
		require.NoError(t, e.c.Respond(tctx(t), e.sid, dataOf(t, evs[len(evs)-1])["requestId"].(string), map[string]string{"outcome": outcome}))
		untilType(t, e.c, e.sid, "turn_end")
	}
	type grant struct {
		Kind      string     `json:"kind"`
		Name      string     `json:"name"`
		GrantedAt *time.Time `json:"grantedAt"`
	}
	grants := func(c *client.Client) []grant {
		t.Helper()
		var res struct {
			Grants []grant `json:"grants"`
		}
		require.NoError(t, c.Call(tctx(t), "session.grants", map[string]string{"sessionId": e.sid}, &res))
		return res.Grants
	}
	before := time.Now().Add(-time.Second)
	answer("touch", "always_command")
	answer("write", "always_tool")
	after := time.Now().Add(time.Second)
	got := grants(e.c)
	require.Len(t, got, 2)
	require.Equal(t, []string{"tool", "command"}, []string{got[0].Kind, got[1].Kind})
	require.Equal(t, []string{"write_file", "touch"}, []string{got[0].Name, got[1].Name})
	for _, g := range got {
		require.NotNil(t, g.GrantedAt)
		require.True(t, g.GrantedAt.After(before) && g.GrantedAt.Before(after), "%v", g.GrantedAt)
	}

	var rev struct {
		Revoked bool `json:"revoked"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.revokeGrant", map[string]string{"sessionId": e.sid, "kind": "command", "name": "touch"}, &rev))
	require.True(t, rev.Revoked)
	err := e.c.Call(tctx(t), "session.revokeGrant", map[string]string{"sessionId": e.sid, "kind": "command", "name": "touch"}, nil)
	require.Equal(t, client.CodeNotFound, client.Code(err))
	err = e.c.Call(tctx(t), "session.revokeGrant", map[string]string{"sessionId": e.sid, "kind": "everything", "name": "touch"}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err))
	require.Len(t, grants(e.c), 1)
	// The revoked command asks again.
	answer("touch again", "deny")

	// After a restart the grant and its time are still there, and it can be
	// revoked before the session's engine is loaded.
	require.NoError(t, e.c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, e.p.waitFor(10*time.Second))
	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	c2 := p2.connect(t)
	got2 := grants(c2)
	require.Len(t, got2, 1)
	require.Equal(t, "write_file", got2[0].Name)
	require.True(t, got2[0].GrantedAt.Equal(*got[0].GrantedAt), "%v vs %v", got2[0].GrantedAt, got[0].GrantedAt)
	require.NoError(t, c2.Call(tctx(t), "session.revokeGrant", map[string]string{"sessionId": e.sid, "kind": "tool", "name": "write_file"}, nil))
	require.Empty(t, grants(c2))
}

// vcs is a project setting: project.open {vcs} and project.setSettings set
// it, sessions without their own vcs follow it (from their next turn), and
// shadow snapshots go to <data-dir>/vcs, never into the project.
func TestE2EVCSIsAProjectSetting(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("w1", "write_file", map[string]any{"path": "one.txt", "content": "1\n"})),
		text("one"),
		calls("", toolCall("w2", "write_file", map[string]any{"path": "two.txt", "content": "2\n"})),
		text("two"),
	)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+script)
	c := p.connect(t)
	type settings struct {
		VCS string `json:"vcs"`
	}
	var pr struct {
		ProjectID string   `json:"projectId"`
		Settings  settings `json:"settings"`
	}
	err := c.Call(tctx(t), "project.open", map[string]string{"path": projDir, "vcs": "svn"}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err))
	require.NoError(t, c.Call(tctx(t), "project.open", map[string]string{"path": projDir, "vcs": "off"}, &pr))
	require.Equal(t, "off", pr.Settings.VCS)
	sid, err := c.CreateSession(tctx(t), pr.ProjectID, map[string]any{"mode": "auto"})
	require.NoError(t, err)
	pinned, err := c.CreateSession(tctx(t), pr.ProjectID, map[string]any{"mode": "auto", "vcs": "off"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	sessionVCS := func(id string) string {
		var got struct {
			Session struct {
				VCS string `json:"vcs"`
			} `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": id}, &got))
		return got.Session.VCS
	}
	turns := func(id string) (int, string) {
		var res struct {
			Turns []json.RawMessage `json:"turns"`
			Plan  struct {
				Mode string `json:"mode"`
			} `json:"plan"`
		}
		require.NoError(t, c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": id}, &res))
		return len(res.Turns), res.Plan.Mode
	}
	require.Equal(t, "off", sessionVCS(sid))
	_, err = c.StartTurn(tctx(t), sid, "one")
	require.NoError(t, err)
	untilType(t, c, sid, "turn_end")
	n, mode := turns(sid)
	require.Equal(t, 0, n)
	require.Equal(t, "off", mode)

	require.NoError(t, c.Call(tctx(t), "project.setSettings", map[string]string{"projectId": pr.ProjectID, "vcs": "shadow"}, &pr))
	require.Equal(t, "shadow", pr.Settings.VCS)
	require.Equal(t, "shadow", sessionVCS(sid))
	require.Equal(t, "off", sessionVCS(pinned), "a session created with its own vcs keeps it")
	_, err = c.StartTurn(tctx(t), sid, "two")
	require.NoError(t, err)
	untilType(t, c, sid, "turn_end")
	n, mode = turns(sid)
	require.Equal(t, 1, n)
	require.Equal(t, "shadow", mode)
	entries, err := os.ReadDir(filepath.Join(dataDir, "vcs"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "one shadow repository per project, in the data dir")
	require.NoDirExists(t, filepath.Join(projDir, ".agent", "vcs"))

	var list struct {
		Projects []struct {
			ProjectID string   `json:"projectId"`
			Settings  settings `json:"settings"`
		} `json:"projects"`
	}
	require.NoError(t, c.Call(tctx(t), "project.list", nil, &list))
	require.Len(t, list.Projects, 1)
	require.Equal(t, "shadow", list.Projects[0].Settings.VCS)
	err = c.Call(tctx(t), "project.setSettings", map[string]string{"projectId": "nope", "vcs": "off"}, nil)
	require.Equal(t, client.CodeNotFound, client.Code(err))
}
