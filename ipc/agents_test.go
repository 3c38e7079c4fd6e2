package ipc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

type agentList struct {
	Agents []protocol.Agent `json:"agents"`
}

func agentNames(t *testing.T, ts *testServer) []string {
	c := ts.dial(t)
	var l agentList
	require.NoError(t, c.Call(tctx(t), "agents.list", nil, &l))
	names := make([]string, len(l.Agents))
	for i, a := range l.Agents {
		names[i] = a.Name
	}
	return names
}

func TestAgentsRegistry(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	var l agentList
	require.NoError(t, c.Call(tctx(t), "agents.list", nil, &l))
	require.Len(t, l.Agents, 2)
	require.Equal(t, "code", l.Agents[0].Name)
	require.True(t, l.Agents[0].Builtin)
	require.Equal(t, "cowork", l.Agents[1].Name)

	var a protocol.Agent
	require.NoError(t, c.Call(tctx(t), "agents.add", map[string]any{"name": "analyst", "description": "data", "prompt": "You are a data analyst."}, &a))
	require.Equal(t, protocol.Agent{Name: "analyst", Description: "data", Prompt: "You are a data analyst.", UpdatedAt: a.UpdatedAt}, a)
	require.Equal(t, wsrpc.CodeConflict, callErr(t, c, "agents.add", map[string]any{"name": "analyst", "prompt": "x"}).Code)
	require.Equal(t, wsrpc.CodeConflict, callErr(t, c, "agents.add", map[string]any{"name": "code", "prompt": "x"}).Code)
	ce := callErr(t, c, "agents.add", map[string]any{"name": "bad name", "prompt": "x"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "name")
	require.Contains(t, callErr(t, c, "agents.add", map[string]any{"name": "np"}).Message, "prompt")

	require.NoError(t, c.Call(tctx(t), "agents.update", map[string]any{"name": "analyst", "model": "m-analyst"}, &a))
	require.Equal(t, "m-analyst", a.Model)
	require.Equal(t, "You are a data analyst.", a.Prompt, "absent members are unchanged")
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "agents.update", map[string]any{"name": "ghost", "model": "x"}).Code)
	require.Equal(t, wsrpc.CodeForbidden, callErr(t, c, "agents.update", map[string]any{"name": "cowork", "model": "x"}).Code)
	require.Equal(t, wsrpc.CodeInvalidParams, callErr(t, c, "agents.update", map[string]any{"name": "analyst", "prompt": ""}).Code)
	require.Equal(t, wsrpc.CodeForbidden, callErr(t, c, "agents.remove", map[string]any{"name": "code"}).Code)

	require.Equal(t, []string{"code", "cowork", "analyst"}, agentNames(t, ts))
	require.NoError(t, c.Call(tctx(t), "agents.remove", map[string]any{"name": "analyst"}, nil))
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "agents.remove", map[string]any{"name": "analyst"}).Code)
	require.Equal(t, []string{"code", "cowork"}, agentNames(t, ts))
}

// TestAgentPromptAndModelReachTheModel: a custom agent's prompt and model are
// what the endpoint receives; switching to a builtin takes its prompt.
func TestAgentPromptAndModelReachTheModel(t *testing.T) {
	f := newFakeOpenAI(t)
	t.Setenv("AGT_API_KEY", "sk-agent-test-key-01")
	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "agt", "baseUrl": f.baseURL(), "apiMode": "chat", "defaultModel": "m-small"}, nil))
	require.NoError(t, c.Call(tctx(t), "agents.add", map[string]any{"name": "analyst", "prompt": "You are a meticulous data analyst.", "model": "m-analyst"}, nil))
	pid := ts.project(t, c)
	ce := callErr(t, c, "session.create", map[string]any{"projectId": pid, "agent": "ghost"})
	require.Equal(t, wsrpc.CodeNotFound, ce.Code)
	require.Contains(t, ce.Message, "agent")
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"provider": "agt", "agent": "analyst"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turn := func() {
		_, err := c.StartTurn(tctx(t), sid, "hi")
		require.NoError(t, err)
		require.Equal(t, "hi from fake", textOf(collectTurn(t, c, sid)))
	}
	turn()
	bodies, _ := f.streamed()
	require.Equal(t, "m-analyst", bodies[0]["model"], "the agent's model")
	sys := systemPrompt(bodies[0])
	require.True(t, strings.HasPrefix(sys, "You are a meticulous data analyst."), sys)

	var info protocol.Session
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "session.setAgent", map[string]any{"sessionId": sid, "agent": "ghost"}).Code)
	require.NoError(t, c.Call(tctx(t), "session.setAgent", map[string]any{"sessionId": sid, "agent": "cowork"}, &info))
	require.Equal(t, "cowork", info.Agent)
	turn()
	bodies, _ = f.streamed()
	require.NotContains(t, systemPrompt(bodies[1]), "data analyst", "the builtin's prompt replaced the custom one")
	require.NotEmpty(t, systemPrompt(bodies[1]))

	// Updating the agent's prompt applies to its sessions' next turn.
	require.NoError(t, c.Call(tctx(t), "session.setAgent", map[string]any{"sessionId": sid, "agent": "analyst"}, nil))
	require.NoError(t, c.Call(tctx(t), "agents.update", map[string]any{"name": "analyst", "prompt": "You are a terse statistician."}, nil))
	turn()
	bodies, _ = f.streamed()
	require.True(t, strings.HasPrefix(systemPrompt(bodies[2]), "You are a terse statistician."))
}
