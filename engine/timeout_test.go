package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestApprovalTimeoutIsNotTheUsersDeny: an approver that denies because
// nobody answered in time (NoteTimeout) gives the model a result that says
// so, and the card's tool_finished too; a plain deny stays the user's.
func TestApprovalTimeoutIsNotTheUsersDeny(t *testing.T) {
	for _, timedOut := range []bool{true, false} {
		r := newRig(t, permission.ModeInteractive, nil,
			scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`)}},
			scripted.Response{Text: "ok"})
		r.eng.SetApprover(func(ctx context.Context, _ permission.Request) (permission.Outcome, error) {
			if timedOut {
				engine.NoteTimeout(ctx, 90*time.Second)
			}
			return permission.OutcomeDeny, nil
		})
		evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
		require.Equal(t, protocol.TurnCompleted, last(evs).Status)
		require.Equal(t, int32(0), r.calls.Load(), "nothing ran")
		fin := find[protocol.ToolFinishedData](evs)[0]
		require.Equal(t, protocol.ToolDenied, fin.Status)
		h := r.eng.Messages()
		var result string
		for _, m := range h {
			if m.Role == llm.RoleTool {
				result = m.Content
			}
		}
		if timedOut {
			require.Equal(t, "no answer within the approval timeout", fin.Reason)
			require.JSONEq(t, `{"error":"no answer came within the session's approval timeout of 1m30s, so this tool call was not run (the user did not deny it)","error_type":"approval_timeout"}`, result)
		} else {
			require.Equal(t, "denied by the user", fin.Reason)
			require.JSONEq(t, `{"error":"the user denied this tool call","error_type":"denied"}`, result)
		}
	}
}
