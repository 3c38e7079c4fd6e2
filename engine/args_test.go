package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// TestArgumentsDecodedOnce: a call whose arguments hold a duplicate or
// case-variant key is refused as invalid_arguments before any decision (no
// approval asked, nothing runs); a valid call's card, approval request and
// handler all see one canonical value, byte for byte.
func TestArgumentsDecodedOnce(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{
			call("c1", "danger", `{"x":"shown","X":"runs"}`),
			call("c2", "danger", `{"x":"a","x":"b"}`),
			call("c3", "danger", `{"x":"ok","y":1}`),
			call("c4", "probe", `{ "x" : "a<b>&c", "n": 1.50 }`),
		}},
		scripted.Response{Text: "done"})
	var handled json.RawMessage
	r.reg.MustRegister(tools.Spec{Name: "probe", Schema: llm.ToolSchema{Function: llm.FunctionSchema{
		Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"},"n":{"type":"number"}},"additionalProperties":false}`)}},
		Meta: tools.Metadata{RiskLevel: tools.RiskHigh, Class: tools.ClassExec},
		Handler: func(_ context.Context, c tools.Call) (any, error) {
			handled = append(json.RawMessage(nil), c.Args...)
			return "probed", nil
		}})
	var asked []permission.Request
	r.eng.SetApprover(func(_ context.Context, req permission.Request) (permission.Outcome, error) {
		asked = append(asked, req)
		return permission.OutcomeOnce, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.Zero(t, r.calls.Load(), "a refused call ran")
	require.Len(t, asked, 1, "only the valid call is asked")

	results := map[string]map[string]string{}
	for _, m := range r.eng.Messages() {
		if m.Role == llm.RoleTool {
			var v map[string]string
			if json.Unmarshal([]byte(m.Content), &v) == nil {
				results[m.ToolCallID] = v
			}
		}
	}
	for id, key := range map[string]string{"c1": `"X"`, "c2": `"x"`, "c3": `"y"`} {
		require.Equal(t, "invalid_arguments", results[id]["error_type"], id)
		require.Contains(t, results[id]["error"], key, id)
	}

	const canon = `{"n":1.50,"x":"a\u003cb\u003e\u0026c"}`
	require.Equal(t, canon, string(handled))
	perms := find[protocol.PermissionRequiredData](evs)
	require.Len(t, perms, 1)
	card, err := json.Marshal(perms[0].Arguments)
	require.NoError(t, err)
	require.Equal(t, canon, string(card), "the card is what the handler got")
	req, err := json.Marshal(asked[0].Arguments)
	require.NoError(t, err)
	require.Equal(t, canon, string(req), "the approval request is what the handler got")
	for _, p := range find[protocol.ToolProposedData](evs) {
		if p.ReqID == "c4" {
			b, _ := json.Marshal(p.Arguments)
			require.Equal(t, canon, string(b))
		}
	}
}
