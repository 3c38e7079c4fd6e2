package ipc

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

func toolFinished(t *testing.T, evs []client.Event) (status string) {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == "tool_finished" {
			var d struct {
				Status string `json:"status"`
			}
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			return d.Status
		}
	}
	t.Fatal("no tool_finished")
	return ""
}

func countType(evs []client.Event, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func TestRuntimeChangesApplyToLoadedEngine(t *testing.T) {
	shell := func(id, cmd string) scripted.Response {
		return scripted.Response{ToolCalls: []llm.ToolCall{{ID: id, Name: "run_shell", Arguments: `{"command":"` + cmd + `"}`}}}
	}
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{Text: "loaded"},
		shell("c1", "echo allowed"), scripted.Response{Text: "ok"},
		shell("c2", "echo in plan mode"), scripted.Response{Text: "refused"},
		scripted.Response{Text: "after the agent change"},
	)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turn := func(text string) []client.Event {
		_, err := c.StartTurn(tctx(t), sid, text)
		require.NoError(t, err)
		return collectTurn(t, c, sid)
	}
	require.Equal(t, "loaded", textOf(turn("load the engine")))

	var info protocol.Session
	require.NoError(t, c.Call(tctx(t), "session.setPermissions", map[string]any{"sessionId": sid, "allowedCommands": []string{"echo"}, "approvalTimeoutMs": 1000}, &info))
	require.Equal(t, []string{"echo"}, info.Settings.AllowedCommands)
	require.EqualValues(t, 1000, info.Settings.ApprovalTimeoutMS)
	evs := turn("allowed command")
	require.Zero(t, countType(evs, "permission_required"))
	require.Equal(t, "ok", toolFinished(t, evs))

	require.NoError(t, c.Call(tctx(t), "session.setMode", map[string]any{"sessionId": sid, "mode": "plan"}, &info))
	require.Equal(t, "plan", info.Mode)
	evs = turn("plan mode")
	require.Zero(t, countType(evs, "permission_required"))
	require.Equal(t, "denied", toolFinished(t, evs))

	require.NoError(t, c.Call(tctx(t), "session.setModel", map[string]any{"sessionId": sid, "model": "other-model"}, &info))
	require.Equal(t, "other-model", info.Model)
	require.NoError(t, c.Call(tctx(t), "session.setAgent", map[string]any{"sessionId": sid, "agent": "cowork"}, &info))
	require.Equal(t, "cowork", info.Agent)
	before := ts.srv.b.LoadedEngine(sid)
	evs = turn("after agent change")
	require.Equal(t, "after the agent change", textOf(evs))
	after := ts.srv.b.LoadedEngine(sid)
	require.NotSame(t, before, after, "the engine was rebuilt for the new agent")
	require.Equal(t, "other-model", after.Model())
	require.Equal(t, "plan", string(after.Mode()))
	var got protocol.SessionGetResult
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	users := 0
	for _, m := range got.Messages {
		if m.Role == "user" {
			users++
		}
	}
	require.Equal(t, 4, users, "history survived the rebuild")

	ce := callErr(t, c, "session.setMode", map[string]any{"sessionId": sid, "mode": "sometimes"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	ce = callErr(t, c, "session.setPermissions", map[string]any{"sessionId": sid, "shellPolicy": "never"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "shellPolicy")
}

func TestSessionListRenameDelete(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: "x"})))
	c := ts.dial(t)
	pid := ts.project(t, c)
	a, err := c.CreateSession(tctx(t), pid, map[string]any{"title": "first"})
	require.NoError(t, err)
	b, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	var list struct {
		Sessions []protocol.Session `json:"sessions"`
	}
	require.NoError(t, c.Call(tctx(t), "session.list", map[string]string{"projectId": pid}, &list))
	require.Len(t, list.Sessions, 2)

	_, err = c.Subscribe(tctx(t), b, 0)
	require.NoError(t, err)
	var info protocol.Session
	require.NoError(t, c.Call(tctx(t), "session.rename", map[string]string{"sessionId": b, "title": "renamed"}, &info))
	require.Equal(t, "renamed", info.Title)
	require.Equal(t, "user", info.TitleSource)
	ev := nextOfType(t, c, b, "session_named")
	require.JSONEq(t, `{"taskId":"","name":"renamed","source":"user"}`, string(ev.Data))

	require.NoError(t, c.Call(tctx(t), "session.delete", map[string]string{"sessionId": a}, nil))
	require.NoError(t, c.Call(tctx(t), "session.list", map[string]string{"projectId": pid}, &list))
	require.Len(t, list.Sessions, 1)
	require.Equal(t, b, list.Sessions[0].SessionID)
	ce := callErr(t, c, "session.get", map[string]string{"sessionId": a})
	require.Equal(t, wsrpc.CodeNotFound, ce.Code)
	ce = callErr(t, c, "turn.steer", map[string]string{"sessionId": b, "text": "x"})
	require.Equal(t, wsrpc.CodeConflict, ce.Code)
	ce = callErr(t, c, "turn.retry", map[string]string{"sessionId": b})
	require.Equal(t, wsrpc.CodeConflict, ce.Code)
}

func TestTurnWithoutModelEndsWithConfigError(t *testing.T) {
	t.Setenv("ZQAGENT_SCRIPT", "")
	t.Setenv("OPENAI_MODEL", "")
	t.Setenv("ZQAGENT_MODEL", "")
	ts := startServer(t, func(o *Options) {
		o.Provider = nil
		o.APIKey = func(context.Context) (string, error) { return "sk-test-not-used", nil }
	})
	c := ts.dial(t)
	var init protocol.InitializeResult
	require.NoError(t, c.Call(tctx(t), "initialize", map[string]any{"protocolVersion": 1}, &init))
	require.Equal(t, backend.ProviderOpenAI, init.Capabilities.Provider)
	require.Empty(t, init.Capabilities.Notice)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turnID, err := c.StartTurn(tctx(t), sid, "hi")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Len(t, evs, 3, "turn_start + error + turn_end")
	require.Equal(t, "turn_start", evs[0].Type)
	require.Contains(t, string(evs[0].Data), `"input":"hi"`)
	require.Equal(t, "error", evs[1].Type)
	require.Contains(t, string(evs[1].Data), `"error_type":"config"`)
	require.Contains(t, string(evs[1].Data), "no model configured")
	require.Contains(t, string(evs[2].Data), `"status":"error"`)
	require.Equal(t, turnID, evs[2].TurnID)
}

func TestDemoProviderNotice(t *testing.T) {
	t.Setenv("ZQAGENT_SCRIPT", "")
	ts := startServer(t, func(o *Options) {
		o.Provider = nil
		o.APIKey = func(context.Context) (string, error) { return "", nil }
	})
	c := ts.dial(t)
	var init protocol.InitializeResult
	require.NoError(t, c.Call(tctx(t), "initialize", map[string]any{"protocolVersion": 1}, &init))
	require.Equal(t, backend.ProviderDemo, init.Capabilities.Provider)
	require.Contains(t, init.Capabilities.Notice, "no API key is configured")
	require.Contains(t, init.Capabilities.Methods, "turn.start")
}

func TestTurnRetryAfterRetriableError(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Err: "upstream down", ErrKind: "server"}, scripted.Response{Text: "second try"})))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Contains(t, string(evs[len(evs)-1].Data), `"status":"error"`)

	var res protocol.TurnResult
	require.NoError(t, c.Call(tctx(t), "turn.retry", map[string]string{"sessionId": sid}, &res))
	require.NotEmpty(t, res.TurnID)
	evs = collectTurn(t, c, sid)
	for _, ev := range evs {
		require.Equal(t, res.TurnID, ev.TurnID, "every event of the retry carries its turn id (%s)", ev.Type)
	}
	require.Contains(t, string(evs[len(evs)-1].Data), `"status":"completed"`)
	require.Equal(t, "second try", textOf(evs))
}
