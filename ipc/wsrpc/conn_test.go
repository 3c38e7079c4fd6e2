package wsrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/zqagent/sidecar/protocol"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
)

const token = "t0ken"

// serve runs an endpoint with methods on a loopback listener, the way the
// server composes it, and returns its URL and a channel that gets each
// connection's end (after its requests returned).
func serve(t *testing.T, methods map[string]wsrpc.Handler) (string, <-chan struct{}) {
	return serveOrdered(t, methods, nil)
}

// serveOrdered is serve with the endpoint's Ordered methods.
func serveOrdered(t *testing.T, methods map[string]wsrpc.Handler, ordered map[string]bool) (string, <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &wsrpc.Endpoint{
		Token: token, Context: ctx, Methods: methods, Gate: "initialize", Ordered: ordered,
		SendQueueBytes: 1 << 20, WriteTimeout: 10 * time.Second, Log: slog.New(slog.DiscardHandler),
	}
	ended := make(chan struct{}, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		if !e.Admit(w, r) {
			return
		}
		c, err := e.Accept(w, r)
		if err != nil {
			return
		}
		c.OnEnd(func() { ended <- struct{}{} })
		c.Serve()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e.SetPort(ln.Addr().(*net.TCPAddr).Port)
	hs := e.HTTPServer(mux)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(wsrpc.Listener(ln))
	}()
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = hs.Shutdown(cctx)
		cancel()
		<-done
	})
	return fmt.Sprintf("ws://127.0.0.1:%d/rpc", e.Port()), ended
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	require.NoError(t, err)
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

type frame struct {
	ID     json.RawMessage  `json:"id"`
	Method string           `json:"method"`
	Result json.RawMessage  `json:"result"`
	Error  *wsrpc.WireError `json:"error"`
}

func roundTrip(t *testing.T, ws *websocket.Conn, req string) frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(req)))
	return read(t, ws)
}

func read(t *testing.T, ws *websocket.Conn) frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, b, err := ws.Read(ctx)
	require.NoError(t, err)
	var f frame
	require.NoError(t, json.Unmarshal(b, &f), string(b))
	return f
}

// TestEndpointRoutesGatesAndFollowsUp: the transport alone, over a real
// socket: a refused token, the gate before initialize, an unknown method,
// a FollowUp that runs only after its answer is queued, params echoed.
func TestEndpointRoutesGatesAndFollowsUp(t *testing.T) {
	url, _ := serve(t, map[string]wsrpc.Handler{
		"initialize": func(_ context.Context, c *wsrpc.Conn, _ json.RawMessage) (any, error) {
			c.MarkInitialized()
			return wsrpc.FollowUp{Result: "ok", After: func() { c.Notify("after", nil) }}, nil
		},
		"echo": func(_ context.Context, _ *wsrpc.Conn, params json.RawMessage) (any, error) {
			var p struct {
				Text string `json:"text" rpc:"required"`
			}
			if err := protocol.DecodeParams(params, &p); err != nil {
				return nil, err
			}
			return p.Text, nil
		},
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer nope"}}})
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	ws := dial(t, url)
	f := roundTrip(t, ws, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`)
	require.NotNil(t, f.Error)
	require.Equal(t, wsrpc.CodeNotInitialized, f.Error.Code)

	f = roundTrip(t, ws, `{"jsonrpc":"2.0","id":2,"method":"nope"}`)
	require.Equal(t, wsrpc.CodeMethodNotFound, f.Error.Code)

	f = roundTrip(t, ws, `{"jsonrpc":"2.0","id":3,"method":"initialize"}`)
	require.Nil(t, f.Error)
	require.JSONEq(t, `"ok"`, string(f.Result))
	require.Equal(t, "after", read(t, ws).Method, "the follow-up runs after the answer")

	f = roundTrip(t, ws, `{"jsonrpc":"2.0","id":4,"method":"echo","params":{"text":"hi"}}`)
	require.JSONEq(t, `"hi"`, string(f.Result))
	f = roundTrip(t, ws, `{"jsonrpc":"2.0","id":5,"method":"echo","params":{}}`)
	require.Equal(t, wsrpc.CodeInvalidParams, f.Error.Code)
	require.Contains(t, f.Error.Message, "text: required")
}

// TestRequestContextEndsWithTheConnection: a request still running when
// the client goes away has its context cancelled, and the connection ends
// (OnEnd) only after it returned.
func TestRequestContextEndsWithTheConnection(t *testing.T) {
	started := make(chan struct{})
	returned := make(chan struct{})
	url, ended := serve(t, map[string]wsrpc.Handler{
		"initialize": func(_ context.Context, c *wsrpc.Conn, _ json.RawMessage) (any, error) {
			c.MarkInitialized()
			return true, nil
		},
		"block": func(ctx context.Context, _ *wsrpc.Conn, _ json.RawMessage) (any, error) {
			close(started)
			<-ctx.Done()
			close(returned)
			return nil, ctx.Err()
		},
	})
	ws := dial(t, url)
	roundTrip(t, ws, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":2,"method":"block"}`)))
	<-started
	ws.CloseNow()
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the connection never ended")
	}
	select {
	case <-returned:
	default:
		t.Fatal("the connection ended before its request returned")
	}
}
