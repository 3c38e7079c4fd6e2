package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// userTexts is the user messages of a model request.
func userTexts(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestForkSession: session/fork is offered at initialize; it forks a
// session of two turns into a new session that has its history (its next
// model request sends both turns and the new prompt), while the source
// goes on without the fork's turn. A cwd that is not the session's folder
// and an unknown session are refused.
func TestForkSession(t *testing.T) {
	prov := scripted.New(scripted.Response{Text: "a1"}, scripted.Response{Text: "a2"}, scripted.Response{Text: "a3"}, scripted.Response{Text: "a4"})
	ed := &editor{}
	conn := serveInProcess(t, prov, ed)
	init, err := conn.Initialize(tctx(t), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err)
	require.NotNil(t, init.AgentCapabilities.SessionCapabilities.Fork, "session/fork is offered")
	proj := t.TempDir()

	s, err := conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	for _, text := range []string{"one", "two"} {
		res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		require.NoError(t, err)
		require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	}

	_, err = conn.UnstableForkSession(tctx(t), sdk.UnstableForkSessionRequest{SessionId: s.SessionId, Cwd: t.TempDir()})
	var re *sdk.RequestError
	require.ErrorAs(t, err, &re)
	require.Equal(t, codeInvalidParams, re.Code)
	_, err = conn.UnstableForkSession(tctx(t), sdk.UnstableForkSessionRequest{SessionId: "nope", Cwd: proj})
	require.ErrorAs(t, err, &re)
	require.Equal(t, codeInvalidParams, re.Code)
	require.Equal(t, protocol.CodeNotFound, int(re.Data.(map[string]any)["sidecarCode"].(float64)))

	f, err := conn.UnstableForkSession(tctx(t), sdk.UnstableForkSessionRequest{SessionId: s.SessionId, Cwd: proj})
	require.NoError(t, err)
	require.NotEqual(t, s.SessionId, f.SessionId)
	require.NotNil(t, f.Modes)

	res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: f.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("three in the fork")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	res, err = conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("three in the source")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	reqs := prov.Requests()
	require.Len(t, reqs, 4)
	require.Equal(t, []string{"one", "two", "three in the fork"}, userTexts(reqs[2].Messages))
	require.Equal(t, []string{"one", "two", "three in the source"}, userTexts(reqs[3].Messages))
}

// TestForkNotOfferedByAnOlderBackend: a backend that does not route
// session.fork (an older sidecar owning the data dir) makes session/fork
// neither offered nor served.
func TestForkNotOfferedByAnOlderBackend(t *testing.T) {
	a := &Agent{methods: map[string]bool{"session.create": true}}
	require.Nil(t, a.sessionCapabilities().Fork)
	require.NotNil(t, a.sessionCapabilities().List)
	_, err := a.UnstableForkSession(t.Context(), sdk.UnstableForkSessionRequest{SessionId: "s1", Cwd: "/p"})
	var re *sdk.RequestError
	require.ErrorAs(t, err, &re)
	require.Equal(t, -32601, re.Code)
	a.methods[forkMethod] = true
	require.NotNil(t, a.sessionCapabilities().Fork)
}
