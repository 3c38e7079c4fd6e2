package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

func TestE2EDisconnectReconnectReplayAnswer(t *testing.T) {
	script := writeScript(t,
		calls("Let me check.", toolCall("c1", "run_shell", map[string]any{"command": "echo reconnected"})),
		text("all done"),
	)
	e := setup(t, script, nil)
	_, err := e.c.StartTurn(tctx(t), e.sid, "go")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	last := evs[len(evs)-1]
	rid := dataOf(t, last)["requestId"].(string)
	lastSeen := evs[len(evs)-3].Seq // pretend the window saw less than everything
	require.NoError(t, e.c.Close())

	c2 := e.p.connect(t)
	res, err := c2.Subscribe(tctx(t), e.sid, lastSeen)
	require.NoError(t, err)
	require.True(t, res.Running)
	require.Equal(t, last.Seq, res.LastSeq)
	require.Len(t, res.PendingRequests, 1)
	require.Equal(t, rid, res.PendingRequests[0].RequestID)
	// The replay resumes right after lastSeen and contains the original
	// permission_required (never re-sent as a new event).
	replayed := untilType(t, c2, e.sid, "permission_required")
	require.Equal(t, lastSeen+1, replayed[0].Seq)
	require.Equal(t, last.Seq, replayed[len(replayed)-1].Seq)
	require.NoError(t, c2.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	rest := untilType(t, c2, e.sid, "turn_end")
	require.Equal(t, last.Seq+1, rest[0].Seq)
	require.Equal(t, "all done", deltaText(t, rest))
	require.Equal(t, "completed", dataOf(t, rest[len(rest)-1])["status"])
}

func TestE2ESigkillWhileApprovalPendingThenRestart(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran-after-restart")
	first := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo resumed > " + marker})),
	)
	e := setup(t, first, nil)
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "do it")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	lastSeq := evs[len(evs)-1].Seq

	require.NoError(t, e.p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, e.p.waitFor(10*time.Second))
	<-e.c.Done()

	// The restarted sidecar continues the conversation with the next
	// scripted response.
	second := writeScript(t, text("finished after restart"))
	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+second)
	c := p2.connect(t)
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Status    string `json:"status"`
		} `json:"sessions"`
	}
	var projects struct {
		Projects []struct {
			ProjectID string `json:"projectId"`
		} `json:"projects"`
	}
	require.NoError(t, c.Call(tctx(t), "project.list", nil, &projects))
	require.Len(t, projects.Projects, 1)
	require.NoError(t, c.Call(tctx(t), "session.list", map[string]string{"projectId": projects.Projects[0].ProjectID}, &list))
	require.Len(t, list.Sessions, 1)
	require.Equal(t, e.sid, list.Sessions[0].SessionID)
	require.Equal(t, "interrupted", list.Sessions[0].Status)

	res, err := c.Subscribe(tctx(t), e.sid, lastSeq)
	require.NoError(t, err)
	require.Len(t, res.PendingRequests, 1)
	require.Equal(t, rid, res.PendingRequests[0].RequestID)
	require.Equal(t, turnID, res.PendingRequests[0].TurnID)
	// The restart recorded a turn_end (sidecar_restart) for the dead turn.
	ev, err := c.NextEvent(tctx(t), e.sid)
	require.NoError(t, err)
	require.Equal(t, "turn_end", ev.Type)
	require.Equal(t, "sidecar_restart", dataOf(t, ev)["reason"])

	var answer struct {
		Answered bool `json:"answered"`
		Resumed  bool `json:"resumed"`
	}
	require.NoError(t, c.Call(tctx(t), "request.respond", map[string]any{"sessionId": e.sid, "requestId": rid, "response": map[string]string{"outcome": "once"}}, &answer))
	require.True(t, answer.Resumed, "the last answer resumes the turn")
	rest := untilType(t, c, e.sid, "turn_end")
	require.Empty(t, ofType(rest, "permission_required"), "the answered call is not asked again")
	require.Equal(t, "ok", dataOf(t, ofType(rest, "tool_finished")[0])["status"])
	require.Equal(t, "finished after restart", deltaText(t, rest))
	require.Equal(t, "completed", dataOf(t, rest[len(rest)-1])["status"])
	require.Equal(t, turnID, rest[len(rest)-1].TurnID)
	b, err := os.ReadFile(marker)
	require.NoError(t, err)
	require.Equal(t, "resumed\n", string(b))

	var got struct {
		Session struct {
			Status string `json:"status"`
		} `json:"session"`
		PendingRequests []json.RawMessage `json:"pendingRequests"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &got))
	require.Empty(t, got.PendingRequests)
	require.Equal(t, "idle", got.Session.Status)
}

func TestE2EApprovalTimeoutDenies(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo never"})),
		text("ok, denied"),
	)
	e := setup(t, script, map[string]any{"approvalTimeoutMs": 200})
	_, err := e.c.StartTurn(tctx(t), e.sid, "go")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	perm := ofType(evs, "permission_required")
	require.Len(t, perm, 1)
	require.Equal(t, "denied", dataOf(t, ofType(evs, "tool_finished")[0])["status"])
	rid := dataOf(t, perm[0])["requestId"].(string)
	err = e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"})
	require.Equal(t, client.CodeConflict, client.Code(err), "the timeout answered first")
}

func TestE2EGrantsAndModeSurviveRestart(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo first"})),
		text("granted"),
	)
	e := setup(t, script, nil)
	_, err := e.c.StartTurn(tctx(t), e.sid, "go")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "always_tool"}))
	untilType(t, e.c, e.sid, "turn_end")
	require.NoError(t, e.c.Call(tctx(t), "session.setMode", map[string]string{"sessionId": e.sid, "mode": "plan"}, nil))
	require.NoError(t, e.c.Call(tctx(t), "session.setMode", map[string]string{"sessionId": e.sid, "mode": "interactive"}, nil))
	require.NoError(t, e.p.stdin.Close())
	require.True(t, e.p.waitFor(15*time.Second))

	second := writeScript(t,
		calls("", toolCall("c2", "run_shell", map[string]any{"command": "echo second"})),
		text("no question asked"),
	)
	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+second)
	c := p2.connect(t)
	_, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	untilType(t, c, e.sid, "turn_end") // the first turn, replayed
	_, err = c.StartTurn(tctx(t), e.sid, "again")
	require.NoError(t, err)
	rest := untilType(t, c, e.sid, "turn_end")
	require.Equal(t, "turn_start", rest[0].Type)
	require.Empty(t, ofType(rest, "permission_required"), "the always_tool grant survived the restart")
	require.Equal(t, "ok", dataOf(t, ofType(rest, "tool_finished")[0])["status"])
	require.Equal(t, "no question asked", deltaText(t, rest))
}
