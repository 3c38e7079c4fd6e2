package ipc

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

var netListen = net.Listen

// rawAnswer sends a frame and returns the next answer that matches no call.
func rawAnswer(t *testing.T, c *client.Client, frame string) json.RawMessage {
	t.Helper()
	require.NoError(t, c.WriteRaw(tctx(t), []byte(frame)))
	for {
		select {
		case n, ok := <-c.Notifications():
			require.True(t, ok, "connection closed")
			if n.Method == "" {
				return n.Params
			}
		case <-tctx(t).Done():
			t.Fatal("no answer")
		}
	}
}

func answerCode(t *testing.T, raw json.RawMessage) (int, string) {
	t.Helper()
	var r struct {
		ID    json.RawMessage  `json:"id"`
		Error *wsrpc.WireError `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	require.NotNil(t, r.Error, string(raw))
	return r.Error.Code, r.Error.Message
}

func TestProtocolErrors(t *testing.T) {
	ts := startServer(t)
	c, err := client.Dial(tctx(t), ts.url, ts.token, checked(t, nil))
	require.NoError(t, err)
	defer c.Close()

	// Before initialize.
	ce := callErr(t, c, "project.list", nil)
	require.Equal(t, wsrpc.CodeNotInitialized, ce.Code)
	_, err = c.Initialize(tctx(t), "t", "1", false)
	require.NoError(t, err)

	cases := []struct {
		frame string
		code  int
		msg   string
	}{
		{`{not json`, wsrpc.CodeParseError, "parse error"},
		{`42`, wsrpc.CodeInvalidRequest, "not an object"},
		{`{"jsonrpc":"1.0","id":"x","method":"project.list"}`, wsrpc.CodeInvalidRequest, "jsonrpc"},
		{`{"jsonrpc":"2.0","id":"x"}`, wsrpc.CodeInvalidRequest, "method"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"project.list"}`, wsrpc.CodeInvalidRequest, "id"},
		{`{"jsonrpc":"2.0","id":"x","method":"project.list","params":3}`, wsrpc.CodeInvalidRequest, "params"},
		{`[]`, wsrpc.CodeInvalidRequest, "empty batch"},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","method":"project.list"}`, wsrpc.CodeInvalidRequest, "at most 256"},
		{`{"jsonrpc":"2.0","id":"x","method":"` + strings.Repeat("m", 200) + `"}`, wsrpc.CodeInvalidRequest, "no method is longer"},
		{`{"jsonrpc":"2.0","id":"x","method":"nope.nope"}`, wsrpc.CodeMethodNotFound, "nope.nope"},
		{`{"jsonrpc":"2.0","id":"x","method":"session.get","params":{}}`, wsrpc.CodeInvalidParams, "sessionId: required"},
		{`{"jsonrpc":"2.0","id":"x","method":"session.subscribe","params":{"sessionId":"s","afterSeq":"abc"}}`, wsrpc.CodeInvalidParams, "afterSeq"},
		{`{"jsonrpc":"2.0","id":"x","method":"session.get","params":{"sessionId":"nope"}}`, wsrpc.CodeNotFound, "nope"},
		{`{"jsonrpc":"2.0","id":"x","method":"project.open","params":{"path":"/"}}`, wsrpc.CodeForbidden, "root"},
		{`{"jsonrpc":"2.0","id":"x","method":"project.open","params":{"path":"/definitely/not/here"}}`, wsrpc.CodeNotFound, "does not exist"},
		{`{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":2}}`, wsrpc.CodeInvalidParams, "protocolVersion"},
	}
	for _, tc := range cases {
		code, msg := answerCode(t, rawAnswer(t, c, tc.frame))
		require.Equal(t, tc.code, code, tc.frame)
		require.Contains(t, msg, tc.msg, tc.frame)
	}
	// The connection still works.
	require.NoError(t, c.Call(tctx(t), "project.list", nil, nil))

	// Batch: two calls and a notification → an array of two answers.
	raw := rawAnswer(t, c, `[{"jsonrpc":"2.0","id":1,"method":"project.list"},{"jsonrpc":"2.0","method":"project.list"},{"jsonrpc":"2.0","id":2,"method":"nope"}]`)
	var arr []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &arr))
	require.Len(t, arr, 2)
}

func TestHomeDirRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ts := startServer(t)
	c := ts.dial(t)
	ce := callErr(t, c, "project.open", map[string]string{"path": home})
	require.Equal(t, wsrpc.CodeForbidden, ce.Code)
	require.Contains(t, ce.Message, "home")
}

func TestProjectSamePathSameID(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	a := ts.project(t, c)
	b := ts.project(t, c)
	require.Equal(t, a, b)
	var list struct {
		Projects []protocol.Project `json:"projects"`
	}
	require.NoError(t, c.Call(tctx(t), "project.list", nil, &list))
	require.Len(t, list.Projects, 1)
	require.True(t, list.Projects[0].Open)
}

func TestOversizedFrameClosesOnlyThatConnection(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: "still alive"})))
	other := ts.dial(t)
	sid := ts.session(t, other, nil)
	_, err := other.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	big := ts.dial(t)
	frame := `{"jsonrpc":"2.0","id":1,"method":"turn.start","params":{"sessionId":"` + sid + `","text":"` + strings.Repeat("x", wsrpc.MaxFrame) + `"}}`
	_ = big.WriteRaw(tctx(t), []byte(frame)) // the server may close before all is written
	<-big.Done()
	require.Equal(t, websocket.StatusMessageTooBig, big.CloseStatus())

	// The other connection and its session keep working.
	_, err = other.StartTurn(tctx(t), sid, "hi")
	require.NoError(t, err)
	require.Equal(t, "still alive", textOf(collectTurn(t, other, sid)))
}

func TestSessionCreateInvalidParams(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	pid := ts.project(t, c)
	ce := callErr(t, c, "session.create", map[string]any{"projectId": pid, "mode": "yolo"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "mode")
	ce = callErr(t, c, "session.create", map[string]any{"projectId": pid, "allowedCommands": "ls"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "allowedCommands")
	ce = callErr(t, c, "session.create", map[string]any{"projectId": "nope"})
	require.Equal(t, wsrpc.CodeNotFound, ce.Code)
}

func TestShutdownMethodSignalsOwner(t *testing.T) {
	called := make(chan struct{})
	ts := startServer(t, func(o *Options) { o.OnShutdown = func() { close(called) } })
	c := ts.dial(t)
	var res struct {
		OK bool `json:"ok"`
	}
	require.NoError(t, c.Call(tctx(t), "shutdown", nil, &res))
	require.True(t, res.OK)
	<-called
	// Close (what the owner does next) says goodbye with 1001 after the answer.
	require.NoError(t, ts.srv.Close(tctx(t)))
	<-c.Done()
	require.Equal(t, websocket.StatusGoingAway, c.CloseStatus())
}
