package ipc

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestAnswerAndResolvedCommitTogether: request.respond stores the answer
// and its request_resolved in one transaction. When the event cannot be
// committed (a trigger aborts it, as a full disk would), the answer is not
// stored either: the request stays open and answerable, so a replay never
// shows an answered request whose card never closes. Once the store works
// again the answer goes through with its event.
func TestAnswerAndResolvedCommitTogether(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell", Arguments: `{"command":"echo hi"}`}}},
		scripted.Response{Text: "understood"},
	)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	perm := nextOfType(t, c, sid, "permission_required")
	var d struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(perm.Data, &d))

	ctx := context.Background()
	db, err := sql.Open("sqlite", ts.st.Path())
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE TRIGGER fail_resolved BEFORE INSERT ON events WHEN NEW.type = 'request_resolved'
		BEGIN SELECT RAISE(ABORT, 'injected commit failure'); END`)
	require.NoError(t, err)

	err = c.Respond(tctx(t), sid, d.RequestID, map[string]string{"outcome": "deny"})
	require.Error(t, err, "the answer's event was not committed")
	req, err := ts.st.Request(ctx, d.RequestID)
	require.NoError(t, err)
	require.False(t, req.Answered, "no answer is stored without its request_resolved")
	var got protocol.SessionGetResult
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	require.Len(t, got.PendingRequests, 1, "the request is still open")

	_, err = db.ExecContext(ctx, `DROP TRIGGER fail_resolved`)
	require.NoError(t, err)
	require.NoError(t, c.Respond(tctx(t), sid, d.RequestID, map[string]string{"outcome": "deny"}))
	res := nextOfType(t, c, sid, "request_resolved")
	var rd protocol.RequestResolvedData
	require.NoError(t, json.Unmarshal(res.Data, &rd))
	require.Equal(t, d.RequestID, rd.RequestID)
	require.Equal(t, protocol.OutcomeDenied, rd.Outcome)
	// Causal: the card closes before what the answer causes.
	fin := nextOfType(t, c, sid, "tool_finished")
	require.Contains(t, string(fin.Data), `"reason":"denied by the user"`)
	nextOfType(t, c, sid, "turn_end")
	req, err = ts.st.Request(ctx, d.RequestID)
	require.NoError(t, err)
	require.True(t, req.Answered)
}
