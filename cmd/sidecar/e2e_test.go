package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

func TestE2EReadyLineAndStreamingTurn(t *testing.T) {
	e := setup(t, writeScript(t, map[string]any{"text": "Hello, streaming world!", "chunkSize": 2}), nil)
	require.True(t, strings.HasPrefix(e.p.ready.URL, "ws://127.0.0.1:"))
	require.Len(t, e.p.ready.Token, 64)
	require.Equal(t, 1, e.p.ready.Protocol)
	require.Equal(t, e.p.cmd.Process.Pid, e.p.ready.PID)

	turnID, err := e.c.StartTurn(tctx(t), e.sid, "say hello")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "turn_start", evs[0].Type)
	require.Equal(t, "Hello, streaming world!", deltaText(t, evs))
	// Deltas that arrive while the store commits are stored as one event
	// (ipc's deltaCoalescer): at least one, at most one per chunk.
	require.NotEmpty(t, ofType(evs, "assistant_delta"))
	require.LessOrEqual(t, len(ofType(evs, "assistant_delta")), 12)
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	for i, ev := range evs {
		require.Equal(t, int64(i+1), ev.Seq)
		require.Equal(t, turnID, ev.TurnID)
	}
	require.Empty(t, e.p.stdout.String(), "nothing but the ready line on stdout")
	require.NotContains(t, e.p.stderr.String(), e.p.ready.Token, "the token is never logged")
}

func TestE2EApprovalOnceAlwaysDeny(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo once"})),
		text("ran once"),
		calls("", toolCall("c2", "run_shell", map[string]any{"command": "echo always"})),
		text("ran always"),
		calls("", toolCall("c3", "run_shell", map[string]any{"command": "echo again"})),
		text("ran again without asking"),
		calls("", toolCall("c4", "ask_user", map[string]any{"question": "Which color?", "options": []string{"red", "blue"}})),
		text("you said blue"),
	)
	e := setup(t, script, nil)

	// once
	_, err := e.c.StartTurn(tctx(t), e.sid, "run echo once")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	perm := dataOf(t, evs[len(evs)-1])
	require.Equal(t, "run_shell", perm["name"])
	require.Equal(t, "c1", perm["reqId"])
	rid := perm["requestId"].(string)
	require.NotEmpty(t, rid)
	var got struct {
		PendingRequests []client.PendingRequest `json:"pendingRequests"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &got))
	require.Len(t, got.PendingRequests, 1)
	require.Equal(t, rid, got.PendingRequests[0].RequestID)
	require.Equal(t, "approval", got.PendingRequests[0].Kind)
	// An invalid answer is refused and names the field; the request stays.
	err = e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "sometimes"})
	require.Equal(t, client.CodeInvalidParams, client.Code(err))
	require.Contains(t, err.Error(), "outcome")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	// First answer wins; unknown ids are not found.
	require.Equal(t, client.CodeConflict, client.Code(e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "deny"})))
	require.Equal(t, client.CodeNotFound, client.Code(e.c.Respond(tctx(t), e.sid, "perm_nope", map[string]string{"outcome": "once"})))
	evs = untilType(t, e.c, e.sid, "turn_end")
	fin := dataOf(t, ofType(evs, "tool_finished")[0])
	require.Equal(t, "ok", fin["status"])
	require.Contains(t, fin["result_preview"], "once")
	require.Equal(t, "ran once", deltaText(t, evs))

	// always_tool: the next run_shell in a later turn is not asked.
	_, err = e.c.StartTurn(tctx(t), e.sid, "run echo always")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "permission_required")
	rid = dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "always_tool"}))
	evs = untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "ran always", deltaText(t, evs))
	_, err = e.c.StartTurn(tctx(t), e.sid, "run echo again")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "always_tool must not ask again")
	require.Equal(t, "ok", dataOf(t, ofType(evs, "tool_finished")[0])["status"])

	// A question answered.
	_, err = e.c.StartTurn(tctx(t), e.sid, "ask me")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "ask_user_question")
	q := dataOf(t, evs[len(evs)-1])
	require.Equal(t, "Which color?", q["question"])
	require.NoError(t, e.c.Respond(tctx(t), e.sid, q["requestId"].(string), map[string]string{"answer": "blue"}))
	evs = untilType(t, e.c, e.sid, "turn_end")
	fin = dataOf(t, ofType(evs, "tool_finished")[0])
	require.Equal(t, "ok", fin["status"])
	require.Contains(t, fin["result_preview"], "blue")
}

func TestE2EApprovalDenied(t *testing.T) {
	marker := t.TempDir() + "/should-not-exist"
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "touch " + marker})),
		text("denied, ok"),
	)
	e := setup(t, script, nil)
	_, err := e.c.StartTurn(tctx(t), e.sid, "touch it")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "deny"}))
	evs = untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "denied", dataOf(t, ofType(evs, "tool_finished")[0])["status"])
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	require.NoFileExists(t, marker)
}
