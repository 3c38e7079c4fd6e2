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

// TestDispatcherCallIsDecidedAsTheRealTool: a call of a dispatcher (the
// shape of mcp_call_tool) is decided, carded, granted and run as the tool it
// names. always_tool through it grants that tool's key only: the other
// tool, through the same dispatcher, asks again and does not run before
// its answer; the granted tool runs unasked through the dispatcher and
// directly. A call that does not resolve is a tool error with no card.
func TestDispatcherCallIsDecidedAsTheRealTool(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "dispatch", `{"name":"reader","arguments":{"x":"1"}}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c2", "dispatch", `{"name":"writer","arguments":{"x":"2"}}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c3", "dispatch", `{"name":"reader","arguments":{"x":"3"}}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c4", "reader", `{"x":"4"}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c5", "dispatch", `{"name":"nope"}`)}},
		scripted.Response{Text: "done"})
	high := tools.Metadata{Category: "mcp", RiskLevel: tools.RiskHigh, Class: tools.ClassNetwork, RequiresApproval: true}
	ran := map[string][]string{}
	realTool := func(name string) tools.Spec {
		return tools.Spec{Name: name, Grant: "srv/" + name, Schema: schema(name), Meta: high, Source: "mcp:srv",
			Handler: func(_ context.Context, c tools.Call) (any, error) {
				ran[name] = append(ran[name], string(c.Args))
				return "ran " + name, nil
			}}
	}
	r.reg.MustRegister(realTool("reader"))
	r.reg.MustRegister(tools.Spec{Name: "dispatch", Schema: schema("dispatch"), Meta: high, Source: "mcp",
		Handler: func(context.Context, tools.Call) (any, error) {
			t.Error("the dispatcher's own handler ran")
			return nil, nil
		},
		Dispatch: func(a tools.Args) (tools.Target, error) {
			name, _ := a.Map["name"].(string)
			if name != "reader" && name != "writer" {
				return tools.Target{}, tools.Errorf("not_found", "no tool %q", name)
			}
			var raw struct{ Arguments json.RawMessage }
			if err := json.Unmarshal(a.Canonical, &raw); err != nil {
				return tools.Target{}, err
			}
			spec := realTool(name)
			args, err := spec.NormalizeArgs(raw.Arguments)
			return tools.Target{Spec: spec, Args: args}, err
		}})
	var asked []permission.Request
	writerRanFirst := false
	r.eng.SetApprover(func(_ context.Context, req permission.Request) (permission.Outcome, error) {
		asked = append(asked, req)
		if req.ToolCallID == "c2" {
			writerRanFirst = len(ran["writer"]) > 0
			return permission.OutcomeDeny, nil
		}
		return permission.OutcomeAlwaysTool, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)

	require.False(t, writerRanFirst, "writer ran before its answer")
	require.Len(t, asked, 2)
	require.Equal(t, "srv/reader", asked[0].ToolName, "the grant key is the real tool's")
	require.Equal(t, "srv/writer", asked[1].ToolName)
	cards := find[protocol.PermissionRequiredData](evs)
	require.Len(t, cards, 2)
	require.Equal(t, "reader", cards[0].Name)
	require.Equal(t, map[string]any{"x": "1"}, cards[0].Arguments)
	require.Equal(t, "dispatch", cards[0].Via)
	require.Equal(t, "srv/reader", cards[0].ToolGrant)
	require.Equal(t, "writer", cards[1].Name)
	require.Equal(t, "srv/writer", cards[1].ToolGrant)

	require.Equal(t, []string{`{"x":"1"}`, `{"x":"3"}`, `{"x":"4"}`}, ran["reader"])
	require.Empty(t, ran["writer"])
	require.Equal(t, []string{"srv/reader"}, r.perms.SessionTools())
	status := map[string]protocol.ToolStatus{}
	for _, f := range find[protocol.ToolFinishedData](evs) {
		status[f.ReqID] = f.Status
	}
	require.Equal(t, map[string]protocol.ToolStatus{"c1": protocol.ToolOK, "c2": protocol.ToolDenied, "c3": protocol.ToolOK, "c4": protocol.ToolOK, "c5": protocol.ToolError}, status)
}
