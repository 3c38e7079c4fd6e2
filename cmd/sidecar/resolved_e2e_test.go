package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// connectAs dials and initializes as the named client.
func (p *proc) connectAs(t *testing.T, name, version string) *client.Client {
	t.Helper()
	c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Initialize(tctx(t), name, version, false)
	require.NoError(t, err)
	return c
}

// untilNote reads notifications until one of method and returns its params
// (events read meanwhile are skipped).
func untilNote(t *testing.T, c *client.Client, method string, dst any) {
	t.Helper()
	ctx := tctx(t)
	for {
		select {
		case n, ok := <-c.Notifications():
			require.True(t, ok, "connection closed before %s", method)
			if n.Method == method {
				require.NoError(t, json.Unmarshal(n.Params, dst))
				return
			}
		case <-ctx.Done():
			t.Fatalf("no %s: %v", method, ctx.Err())
		}
	}
}

func resolvedOf(t *testing.T, evs []client.Event) protocol.RequestResolvedData {
	t.Helper()
	rs := ofType(evs, "request_resolved")
	require.Len(t, rs, 1, "one request_resolved")
	var d protocol.RequestResolvedData
	require.NoError(t, json.Unmarshal(rs[0].Data, &d))
	return d
}

func clientNames(cs []protocol.PresenceClient) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// TestE2ERequestResolvedReachesEveryWindow: three windows watch a session;
// one answers the approval, the other two see request_resolved (before the
// tool runs), a late subscriber's replay has it, and presence follows who
// is attached.
func TestE2ERequestResolvedReachesEveryWindow(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo hi"})),
		text("done"),
	)
	e := setup(t, script, nil) // e.c is "e2e" 1
	b := e.p.connectAs(t, "window-b", "2.0")
	res, err := b.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"e2e", "window-b"}, clientNames(res.Clients))
	require.NotEqual(t, res.Clients[0].ConnectionID, res.Clients[1].ConnectionID)
	c := e.p.connectAs(t, "window-c", "3.0")
	res, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"e2e", "window-b", "window-c"}, clientNames(res.Clients))
	require.Equal(t, "3.0", res.Clients[2].Version)
	var pres protocol.SessionPresence
	untilNote(t, b, "session.presence", &pres) // c joined
	require.Equal(t, e.sid, pres.SessionID)
	require.Equal(t, []string{"e2e", "window-b", "window-c"}, clientNames(pres.Clients))

	_, err = e.c.StartTurn(tctx(t), e.sid, "run it")
	require.NoError(t, err)
	var rid string
	for _, w := range []*client.Client{e.c, b, c} {
		evs := untilType(t, w, e.sid, "permission_required")
		rid = dataOf(t, evs[len(evs)-1])["requestId"].(string)
	}
	require.NoError(t, b.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	for _, w := range []*client.Client{e.c, c} {
		evs := untilType(t, w, e.sid, "turn_end")
		d := resolvedOf(t, evs)
		require.Equal(t, rid, d.RequestID)
		require.Equal(t, protocol.OutcomeApproved, d.Outcome)
		require.Equal(t, "approval", d.Kind)
		require.NotEmpty(t, d.TaskID)
		// Before what the answer caused.
		var iRes, iStart int
		for i, ev := range evs {
			switch ev.Type {
			case "request_resolved":
				iRes = i
			case "tool_started":
				iStart = i
			}
		}
		require.Less(t, iRes, iStart)
	}
	untilType(t, b, e.sid, "turn_end")

	// A late window's replay closes the card too.
	late := e.p.connectAs(t, "late", "1")
	_, err = late.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	evs := untilType(t, late, e.sid, "turn_end")
	require.Equal(t, rid, resolvedOf(t, evs).RequestID)

	// One window closes: the others learn it.
	require.NoError(t, c.Close())
	for _, w := range []*client.Client{e.c, b} {
		for {
			var p protocol.SessionPresence
			untilNote(t, w, "session.presence", &p)
			if len(p.Clients) == 3 { // e2e, window-b, late
				require.Equal(t, []string{"e2e", "window-b", "late"}, clientNames(p.Clients))
				break
			}
		}
	}
	// Unsubscribing is leaving too.
	require.NoError(t, late.Call(tctx(t), "session.unsubscribe", map[string]string{"sessionId": e.sid}, nil))
	var p protocol.SessionPresence
	for len(p.Clients) != 2 {
		untilNote(t, b, "session.presence", &p)
	}
	require.Equal(t, []string{"e2e", "window-b"}, clientNames(p.Clients))
}

// TestE2ERequestResolvedByTimeoutAndInterrupt: a timed-out approval and the
// pending request of an interrupted turn are resolved too.
func TestE2ERequestResolvedByTimeoutAndInterrupt(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo never"})),
		text("ok, denied"),
		calls("", toolCall("c2", "ask_user", map[string]any{"question": "Which color?", "options": []string{"red", "blue"}})),
		text("unreached"),
	)
	e := setup(t, script, map[string]any{"approvalTimeoutMs": 200})
	other := e.p.connectAs(t, "other", "1")
	_, err := other.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)

	_, err = e.c.StartTurn(tctx(t), e.sid, "go")
	require.NoError(t, err)
	for _, w := range []*client.Client{e.c, other} {
		evs := untilType(t, w, e.sid, "turn_end")
		rid := dataOf(t, ofType(evs, "permission_required")[0])["requestId"].(string)
		d := resolvedOf(t, evs)
		require.Equal(t, rid, d.RequestID)
		require.Equal(t, protocol.OutcomeTimeout, d.Outcome)
		// Neither the card nor the model reads a timeout as the user's deny.
		fin := dataOf(t, ofType(evs, "tool_finished")[0])
		require.Equal(t, "denied", fin["status"])
		require.Equal(t, "no answer within the approval timeout", fin["reason"])
	}
	results := toolResults(t, e.c, e.sid)
	require.Len(t, results, 1)
	var res struct {
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}
	require.NoError(t, json.Unmarshal([]byte(results[0]), &res), results[0])
	require.Equal(t, "approval_timeout", res.ErrorType)
	require.Contains(t, res.Error, "no answer came within the session's approval timeout of 200ms, so this tool call was not run")
	require.NotContains(t, res.Error, "the user denied")
	var reqs struct {
		PendingRequests []client.PendingRequest `json:"pendingRequests"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &reqs))
	require.Empty(t, reqs.PendingRequests)

	// A question (never timed out) left open by an interrupt.
	_, err = e.c.StartTurn(tctx(t), e.sid, "ask")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "ask_user_question")
	qid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	for _, w := range []*client.Client{e.c, other} {
		d := resolvedOf(t, untilType(t, w, e.sid, "request_resolved"))
		require.Equal(t, qid, d.RequestID)
		require.Equal(t, protocol.OutcomeTurnEnded, d.Outcome)
		require.Equal(t, "question", d.Kind)
	}
	var got struct {
		PendingRequests []client.PendingRequest `json:"pendingRequests"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &got))
	require.Empty(t, got.PendingRequests)
}
