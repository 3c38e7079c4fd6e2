package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// elicitServerBinary builds the test MCP server (mcp/testdata/mcpserver).
func elicitServerBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver-elicit")
	out, err := exec.Command("go", "build", "-o", bin, "../../mcp/testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, "build the test MCP server: %s", out)
	return bin
}

// elicitEnv is a sidecar running script with a project whose MCP server
// "el" has the elicitation tools (its view of every answer is appended to
// log), and a subscribed session.
type elicitEnv struct {
	*env
	log string
}

func setupElicit(t *testing.T, script string) *elicitEnv {
	t.Helper()
	bin := elicitServerBinary(t)
	e := &elicitEnv{env: &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: filepath.Join(t.TempDir(), "proj")},
		log: filepath.Join(t.TempDir(), "seen")}
	require.NoError(t, os.MkdirAll(e.projDir, 0o755))
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	e.c = e.p.connect(t)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	require.NoError(t, e.c.Call(tctx(t), "mcp.add", map[string]any{
		"projectId": pid,
		"config":    map[string]any{"name": "el", "command": bin, "args": []string{"-elicit", "-elicit-log", e.log}},
	}, nil))
	waitConnected(t, e.c, pid, "el")
	e.sid, err = e.c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	return e
}

// nextElicitation reads events, allowing every MCP tool once it asks for
// approval (always_tool), until an elicitation_requested, and returns it
// with the events read.
func nextElicitation(t *testing.T, c *client.Client, sid string) (protocol.ElicitationRequestedData, []client.Event) {
	t.Helper()
	var read []client.Event
	for {
		evs := untilAny(t, c, sid, "permission_required", "elicitation_requested")
		read = append(read, evs...)
		ev := evs[len(evs)-1]
		if ev.Type == "permission_required" {
			require.NoError(t, c.Respond(tctx(t), sid, dataOf(t, ev)["requestId"].(string), map[string]string{"outcome": "always_tool"}))
			continue
		}
		var d protocol.ElicitationRequestedData
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		return d, read
	}
}

// untilAny reads events until one of the types and returns all read.
func untilAny(t *testing.T, c *client.Client, sid string, types ...string) []client.Event {
	t.Helper()
	var out []client.Event
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		out = append(out, ev)
		for _, typ := range types {
			if ev.Type == typ {
				return out
			}
		}
	}
}

// finishedPreview is the result preview of the tool call reqID.
func finishedPreview(t *testing.T, evs []client.Event, reqID string) string {
	t.Helper()
	for _, ev := range ofType(evs, "tool_finished") {
		if d := dataOf(t, ev); d["reqId"] == reqID {
			p, _ := d["result_preview"].(string)
			return p
		}
	}
	t.Fatalf("no tool_finished of %s", reqID)
	return ""
}

// TestE2EElicitationFormThroughAReconnect drives the real binary with a real
// MCP server that asks a form during its tool call: the card comes as
// elicitation_requested (stored: session.get lists it as a pending request
// of kind elicitation); content the form refuses is -32602 naming the field
// and the card stays; a second window that connects in the middle sees the
// card in its subscribe answer and its replay and answers it; the server
// gets exactly the content; every window sees request_resolved {accepted}.
func TestE2EElicitationFormThroughAReconnect(t *testing.T) {
	e := setupElicit(t, writeScript(t,
		calls("", toolCall("m1", "mcp__el__elicit_form", map[string]any{})),
		text("thanks"),
	))
	_, err := e.c.StartTurn(tctx(t), e.sid, "who am I")
	require.NoError(t, err)
	card, _ := nextElicitation(t, e.c, e.sid)
	require.Equal(t, "el", card.Server)
	require.Equal(t, "form", card.Mode)
	require.Equal(t, "Who are you?", card.Message)
	require.Equal(t, "m1", card.ReqID)
	require.NotEmpty(t, card.RequestID)
	require.Contains(t, string(card.RequestedSchema), `"email":{"format":"email","type":"string"}`)
	require.Empty(t, card.URL)

	var got protocol.SessionGetResult
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]any{"sessionId": e.sid}, &got))
	require.Len(t, got.PendingRequests, 1)
	require.Equal(t, "elicitation", got.PendingRequests[0].Kind)
	require.Equal(t, card.RequestID, got.PendingRequests[0].RequestID)

	// Content the form refuses: -32602 naming the field; the card stays.
	for field, content := range map[string]map[string]any{
		"response.content.age":   {"name": "Ada", "age": 200},
		"response.content.email": {"name": "Ada", "email": "not-an-address"},
		"response.content.name":  {"age": 3},
	} {
		err = e.c.Respond(tctx(t), e.sid, card.RequestID, map[string]any{"action": "accept", "content": content})
		var we *client.Error
		require.True(t, errors.As(err, &we), "%v", err)
		require.Equal(t, client.CodeInvalidParams, we.Code)
		require.Equal(t, field, we.Data.Field, we.Message)
	}

	// A second window connects in the middle: the card is pending there.
	b := e.p.connectAs(t, "window-b", "2")
	res, err := b.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	require.Len(t, res.PendingRequests, 1)
	require.Equal(t, "elicitation", res.PendingRequests[0].Kind)
	var pendingCard protocol.ElicitationRequestedData
	require.NoError(t, json.Unmarshal(res.PendingRequests[0].Data, &pendingCard))
	require.Equal(t, card, pendingCard)
	replay := untilType(t, b, e.sid, "elicitation_requested")
	require.Equal(t, card.RequestID, dataOf(t, replay[len(replay)-1])["requestId"])
	require.NoError(t, b.Respond(tctx(t), e.sid, card.RequestID, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": 36}}))

	for _, c := range []*client.Client{e.c, b} {
		evs := untilType(t, c, e.sid, "turn_end")
		d := resolvedOf(t, evs)
		require.Equal(t, protocol.RequestResolvedData{TaskID: card.TaskID, RequestID: card.RequestID, Kind: "elicitation", Outcome: "accepted"}, d)
		require.Contains(t, finishedPreview(t, evs, "m1"), `action=accept content={"age":36,"name":"Ada"}`, "the server got the content")
		require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	}
	err = e.c.Respond(tctx(t), e.sid, card.RequestID, map[string]any{"action": "decline"})
	var we *client.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeConflict, we.Code, "answered once")
}

// TestE2EElicitationDeclineAndCancelReachTheServer: decline and cancel go
// to the server, asked the server-initiated way (MCP before 2026-07-28) and
// the multi round-trip way; request_resolved says declined and cancelled.
func TestE2EElicitationDeclineAndCancelReachTheServer(t *testing.T) {
	e := setupElicit(t, writeScript(t,
		calls("", toolCall("d1", "mcp__el__elicit_direct", map[string]any{})),
		calls("", toolCall("f1", "mcp__el__elicit_form", map[string]any{})),
		text("ok"),
	))
	_, err := e.c.StartTurn(tctx(t), e.sid, "ask twice")
	require.NoError(t, err)
	var evs []client.Event
	for _, tc := range []struct{ reqID, action, outcome string }{{"d1", "decline", "declined"}, {"f1", "cancel", "cancelled"}} {
		card, _ := nextElicitation(t, e.c, e.sid)
		require.Equal(t, tc.reqID, card.ReqID)
		require.NoError(t, e.c.Respond(tctx(t), e.sid, card.RequestID, map[string]any{"action": tc.action}))
		evs = untilType(t, e.c, e.sid, "tool_finished")
		require.Equal(t, tc.outcome, resolvedOf(t, evs).Outcome)
		require.Contains(t, finishedPreview(t, evs, tc.reqID), "action="+tc.action+" content=null")
	}
	untilType(t, e.c, e.sid, "turn_end")
	b, err := os.ReadFile(e.log)
	require.NoError(t, err)
	require.Equal(t, "elicit_direct action=decline content=null\nelicit_form action=cancel content=null\n", string(b))
}

// TestE2EElicitationURLMode: a URL-mode card shows the URL and its host
// (an IDN as punycode); a URL that is not https: (nor loopback http:) is
// declined to the server and never shown.
func TestE2EElicitationURLMode(t *testing.T) {
	e := setupElicit(t, writeScript(t,
		calls("", toolCall("u1", "mcp__el__elicit_url", map[string]any{"url": "https://bücher.example/sign-in"})),
		calls("", toolCall("u2", "mcp__el__elicit_url", map[string]any{"url": "javascript:alert(1)"})),
		calls("", toolCall("u3", "mcp__el__elicit_url", map[string]any{"url": "http://evil.example/login"})),
		text("ok"),
	))
	_, err := e.c.StartTurn(tctx(t), e.sid, "sign in")
	require.NoError(t, err)
	card, _ := nextElicitation(t, e.c, e.sid)
	require.Equal(t, "url", card.Mode)
	require.Equal(t, "https://bücher.example/sign-in", card.URL)
	require.Equal(t, "xn--bcher-kva.example", card.Host)
	require.Equal(t, "el-1", card.ElicitationID)
	require.Empty(t, card.RequestedSchema)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, card.RequestID, map[string]any{"action": "accept"}))
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Len(t, ofType(evs, "elicitation_requested"), 0, "the other URLs are never shown")
	require.Contains(t, finishedPreview(t, evs, "u1"), "action=accept content=null")
	require.Contains(t, finishedPreview(t, evs, "u2"), "action=decline")
	require.Contains(t, finishedPreview(t, evs, "u3"), "action=decline")
}

// TestE2EElicitationInterruptedTurnCancelsIt: a turn interrupted while its
// elicitation waits closes the card with request_resolved {turn_ended}
// before its turn_end, and the server gets cancel.
func TestE2EElicitationInterruptedTurnCancelsIt(t *testing.T) {
	e := setupElicit(t, writeScript(t,
		calls("", toolCall("d1", "mcp__el__elicit_direct", map[string]any{})),
		text("never"),
	))
	_, err := e.c.StartTurn(tctx(t), e.sid, "ask")
	require.NoError(t, err)
	card, _ := nextElicitation(t, e.c, e.sid)
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]any{"sessionId": e.sid}, nil))
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, protocol.RequestResolvedData{TaskID: card.TaskID, RequestID: card.RequestID, Kind: "elicitation", Outcome: "turn_ended"}, resolvedOf(t, evs))
	require.Equal(t, "interrupted", dataOf(t, evs[len(evs)-1])["status"])
	var got protocol.SessionGetResult
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]any{"sessionId": e.sid}, &got))
	require.Empty(t, got.PendingRequests)
	waitServerSaw(t, e.log, "elicit_direct action=cancel content=null\n")
}

// waitServerSaw waits until path holds want (what the MCP server appends).
func waitServerSaw(t *testing.T, path, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(path)
		return string(b) == want
	}, 30*time.Second, 20*time.Millisecond, "%s never held %q", path, want)
}
