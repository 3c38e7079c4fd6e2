package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestUsageUpdates: a usage event is ACP's usage_update with the session's
// context fill as used/size and its cost in USD when known; without a
// known window there is none.
func TestUsageUpdates(t *testing.T) {
	cost, none := 0.0125, (*float64)(nil)
	fill := &protocol.ContextFill{Tokens: 1200, Window: 128000, Percent: 0.9}
	tests := []struct {
		name string
		d    protocol.UsageData
		want []map[string]any
	}{
		{"fill and cost", protocol.UsageData{Requests: 2, Context: fill, Cost: &protocol.UsageCost{Response: 0.01, Session: &cost}},
			[]map[string]any{{"sessionUpdate": "usage_update", "used": 1200.0, "size": 128000.0, "cost": map[string]any{"amount": 0.0125, "currency": "USD"}}}},
		{"no price", protocol.UsageData{Requests: 1, Context: fill},
			[]map[string]any{{"sessionUpdate": "usage_update", "used": 1200.0, "size": 128000.0}}},
		{"a session cost no longer known", protocol.UsageData{Requests: 3, Context: fill, Cost: &protocol.UsageCost{Response: 0.01, Session: none}},
			[]map[string]any{{"sessionUpdate": "usage_update", "used": 1200.0, "size": 128000.0}}},
		{"window unknown", protocol.UsageData{Requests: 1, Cost: &protocol.UsageCost{Session: &cost}}, []map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTranslator(t.TempDir())
			for _, history := range []bool{false, true} {
				ups, err := tr.updates(event(t, protocol.EventUsage, tc.d), history)
				require.NoError(t, err)
				require.Equal(t, tc.want, wire(t, ups))
			}
		})
	}
}

// TestUsageUpdateAfterEachResponse: through the real agent, each model
// response of a prompt (here two: a tool call, then the answer) is
// followed by a usage_update with the context fill, before the prompt's
// answer.
func TestUsageUpdateAfterEachResponse(t *testing.T) {
	prov := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "list_files", Arguments: `{}`}}, Usage: &llm.Usage{PromptTokens: 900, CompletionTokens: 100}},
		scripted.Response{Text: "done", Usage: &llm.Usage{PromptTokens: 1500, CompletionTokens: 20}},
	)
	ed := &editor{}
	conn := serveInProcess(t, prov, ed)
	s, err := conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	ed.mu.Lock()
	defer ed.mu.Unlock()
	var used []int
	for _, u := range ed.updates {
		if uu := u.UsageUpdate; uu != nil {
			require.Positive(t, uu.Size)
			require.Nil(t, uu.Cost, "the scripted model has no price")
			used = append(used, uu.Used)
		}
	}
	require.Equal(t, []int{1000, 1520}, used)
}
