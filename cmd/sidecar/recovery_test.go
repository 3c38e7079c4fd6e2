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
	require.Equal(t, "suspended", list.Sessions[0].Status, "it waits for an answer")

	res, err := c.Subscribe(tctx(t), e.sid, lastSeq)
	require.NoError(t, err)
	require.Len(t, res.PendingRequests, 1)
	require.Equal(t, rid, res.PendingRequests[0].RequestID)
	require.Equal(t, turnID, res.PendingRequests[0].TurnID)
	// The restart suspended the dead turn (it is not over: no turn_end).
	ev, err := c.NextEvent(tctx(t), e.sid)
	require.NoError(t, err)
	require.Equal(t, "turn_suspended", ev.Type)
	require.Equal(t, turnID, ev.TurnID)
	require.Equal(t, "sidecar_restart", dataOf(t, ev)["reason"])
	require.Equal(t, []any{rid}, dataOf(t, ev)["pendingRequests"])

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
	require.Equal(t, "request_resolved", rest[0].Type, "the answer is resolved before the turn resumes")
	require.Equal(t, rid, dataOf(t, rest[0])["requestId"])
	require.True(t, dataOf(t, ofType(rest, "turn_start")[0])["resumed"].(bool), "the resumed turn's turn_start says so")

	// Nothing is left to resume once the runner is idle, and the whole
	// history has exactly one turn_end for the turn.
	require.Eventually(t, func() bool {
		var g struct {
			Session struct {
				Running bool `json:"running"`
			} `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &g))
		return !g.Session.Running
	}, 60*time.Second, 10*time.Millisecond, "the session never came to rest")
	err = c.Call(tctx(t), "turn.resume", map[string]string{"sessionId": e.sid}, nil)
	require.Equal(t, client.CodeConflict, client.Code(err), "nothing to resume")
	c3 := p2.connect(t)
	_, err = c3.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	all := untilType(t, c3, e.sid, "turn_end")
	ends := 0
	for _, ev := range all {
		if ev.Type == "turn_end" && ev.TurnID == turnID {
			ends++
		}
	}
	require.Equal(t, 1, ends, "exactly one turn_end for the turn across the restart")

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

// TestE2ESuspendedTurnResumeIsNoopThenInterrupt: after a restart, the
// answer resumes the suspended turn; turn.resume while it runs is a no-op
// with the same turnId; turn.interrupt ends it; one turn_end in all.
func TestE2ESuspendedTurnResumeIsNoopThenInterrupt(t *testing.T) {
	first := writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo hi"})))
	e := setup(t, first, nil)
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "do it")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, e.p.waitFor(10*time.Second))

	second := writeScript(t, map[string]any{"text": "thinking", "stall": true})
	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+second)
	c := p2.connect(t)
	_, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	untilType(t, c, e.sid, "turn_suspended")
	require.NoError(t, c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	untilType(t, c, e.sid, "assistant_delta") // the resumed turn streams, then stalls

	var rr struct {
		TurnID string `json:"turnId"`
	}
	require.NoError(t, c.Call(tctx(t), "turn.resume", map[string]string{"sessionId": e.sid}, &rr))
	require.Equal(t, turnID, rr.TurnID, "a no-op on the turn the answer resumed")
	require.NoError(t, c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	end := untilType(t, c, e.sid, "turn_end")
	require.Equal(t, "interrupted", dataOf(t, end[len(end)-1])["status"])

	c2 := p2.connect(t)
	_, err = c2.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	all := untilType(t, c2, e.sid, "turn_end")
	require.Equal(t, turnID, all[len(all)-1].TurnID)
	require.Len(t, ofType(all, "turn_end"), 1)
}

// TestE2EInterruptSuspendedTurn: turn.interrupt ends a suspended turn: its
// one turn_end, its requests closed (answering one is a conflict).
func TestE2EInterruptSuspendedTurn(t *testing.T) {
	first := writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo never"})))
	e := setup(t, first, nil)
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "do it")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, e.p.waitFor(10*time.Second))

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("new turn")))
	c := p2.connect(t)
	_, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	untilType(t, c, e.sid, "turn_suspended")
	var res struct {
		Interrupted bool `json:"interrupted"`
	}
	require.NoError(t, c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, &res))
	require.True(t, res.Interrupted)
	end := untilType(t, c, e.sid, "turn_end")
	require.Equal(t, turnID, end[len(end)-1].TurnID)
	require.Equal(t, "interrupted", dataOf(t, end[len(end)-1])["status"])
	require.Equal(t, client.CodeConflict, client.Code(c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"})))

	// The next turn runs normally (the unanswered call got a result).
	_, err = c.StartTurn(tctx(t), e.sid, "again")
	require.NoError(t, err)
	rest := untilType(t, c, e.sid, "turn_end")
	require.Equal(t, "new turn", deltaText(t, rest))
	require.Equal(t, "completed", dataOf(t, rest[len(rest)-1])["status"])
}

// TestE2EApprovedCommandNeverRunsTwice (issue 15): killed while an approved
// run_shell runs, then restarted and resumed: the command is not run again;
// the model gets the "may have run" result and goes on, in a new turn (the
// dead one got its one turn_end at restart).
func TestE2EApprovedCommandNeverRunsTwice(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "runs")
	first := writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo ran >> " + counter + "; sleep 60"})))
	e := setup(t, first, nil)
	deadTurn, err := e.c.StartTurn(tctx(t), e.sid, "do it")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	untilType(t, e.c, e.sid, "tool_started")
	require.Eventually(t, func() bool { // the command runs
		b, err := os.ReadFile(counter)
		return err == nil && len(b) > 0
	}, 60*time.Second, 10*time.Millisecond, "the approved command never ran")
	require.NoError(t, e.p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, e.p.waitFor(10*time.Second))

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("checked the effects")))
	c := p2.connect(t)
	_, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	var res struct {
		TurnID string `json:"turnId"`
	}
	require.NoError(t, c.Call(tctx(t), "turn.resume", map[string]string{"sessionId": e.sid}, &res))
	require.NotEqual(t, deadTurn, res.TurnID, "the dead turn already had its turn_end")
	var rest []client.Event
	for { // up to the resumed turn's end
		ev, err := c.NextEvent(tctx(t), e.sid)
		require.NoError(t, err)
		if ev.TurnID == res.TurnID {
			rest = append(rest, ev)
			if ev.Type == "turn_end" {
				break
			}
		}
	}
	require.Empty(t, ofType(rest, "permission_required"), "not asked again")
	require.Empty(t, ofType(rest, "tool_started"), "not run again")
	fin := dataOf(t, ofType(rest, "tool_finished")[0])
	require.Equal(t, "c1", fin["reqId"])
	require.Contains(t, fin["result_preview"], "may have run")
	require.Equal(t, "checked the effects", deltaText(t, rest))
	require.Equal(t, "completed", dataOf(t, rest[len(rest)-1])["status"])
	b, err := os.ReadFile(counter)
	require.NoError(t, err)
	require.Equal(t, "ran\n", string(b), "the approved command ran exactly once")
}

// TestE2ERetryAfterRestart: a turn that ended in a retriable error can be
// retried after the sidecar restarted (the engine's memory of the error is
// rebuilt from the store); a turn that ended otherwise still cannot.
func TestE2ERetryAfterRestart(t *testing.T) {
	first := writeScript(t, map[string]any{"err": "upstream 503", "errKind": "server"})
	e := setup(t, first, nil)
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "hello")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "error", dataOf(t, evs[len(evs)-1])["status"])
	require.Equal(t, true, dataOf(t, ofType(evs, "error")[0])["retriable"])
	require.NoError(t, e.p.stdin.Close())
	require.True(t, e.p.waitFor(15*time.Second))

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("answered now")))
	c := p2.connect(t)
	_, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	untilType(t, c, e.sid, "turn_end") // the replay of the failed turn
	var rr struct {
		TurnID string `json:"turnId"`
	}
	require.NoError(t, c.Call(tctx(t), "turn.retry", map[string]string{"sessionId": e.sid}, &rr))
	require.NotEqual(t, turnID, rr.TurnID)
	evs = untilType(t, c, e.sid, "turn_end")
	require.Equal(t, rr.TurnID, evs[len(evs)-1].TurnID)
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"], string(evs[len(evs)-1].Data))
	require.Equal(t, "answered now", deltaText(t, evs))

	// Completed: nothing to retry, after another restart too.
	err = c.Call(tctx(t), "turn.retry", map[string]string{"sessionId": e.sid}, nil)
	require.ErrorContains(t, err, "retriable")
	require.NoError(t, p2.stdin.Close())
	require.True(t, p2.waitFor(15*time.Second))
	p3 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("never")))
	c3 := p3.connect(t)
	err = c3.Call(tctx(t), "turn.retry", map[string]string{"sessionId": e.sid}, nil)
	require.ErrorContains(t, err, "retriable")
}
