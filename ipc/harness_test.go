package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol/validate"
	"github.com/zqagent/sidecar/store"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

type testServer struct {
	srv   *Server
	st    *store.Store
	url   string
	port  int
	dir   string
	token string
}

type serverOpt func(*Options)

func withProvider(p llm.Provider) serverOpt { return func(o *Options) { o.Provider = p } }

// startServer runs a real server on a loopback port with a real store in a
// temp dir; everything is closed when the test ends.
func startServer(t testing.TB, opts ...serverOpt) *testServer {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "data"), store.Options{})
	require.NoError(t, err)
	o := Options{Store: st, DataDir: filepath.Join(dir, "data"), Token: testToken, Version: "test", Logger: slog.New(slog.DiscardHandler), AllowOrigins: []string{"tauri://localhost"}, Provider: scripted.New()}
	for _, f := range opts {
		f(&o)
	}
	srv, err := New(o)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	port := ln.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Close(ctx))
		require.NoError(t, <-served)
		require.NoError(t, st.Close())
	})
	return &testServer{srv: srv, st: st, url: fmt.Sprintf("ws://127.0.0.1:%d/rpc", port), port: port, dir: dir, token: testToken}
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dial connects and initializes.
func (ts *testServer) dial(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.Dial(tctx(t), ts.url, ts.token, checked(t, nil))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Initialize(tctx(t), "test", "1", false)
	require.NoError(t, err)
	return c
}

// project makes a project folder and opens it.
func (ts *testServer) project(t testing.TB, c *client.Client) string {
	t.Helper()
	dir := filepath.Join(ts.dir, "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	id, err := c.OpenProject(tctx(t), dir)
	require.NoError(t, err)
	return id
}

// session opens a project and creates a session in it.
func (ts *testServer) session(t testing.TB, c *client.Client, extra map[string]any) string {
	t.Helper()
	sid, err := c.CreateSession(tctx(t), ts.project(t, c), extra)
	require.NoError(t, err)
	return sid
}

// collectTurn reads events of a session until turn_end.
func collectTurn(t *testing.T, c *client.Client, sid string) []client.Event {
	t.Helper()
	var out []client.Event
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		out = append(out, ev)
		if ev.Type == "turn_end" {
			return out
		}
	}
}

// nextOfType reads events until one of type typ.
func nextOfType(t *testing.T, c *client.Client, sid, typ string) client.Event {
	t.Helper()
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		if ev.Type == typ {
			return ev
		}
	}
}

func textOf(evs []client.Event) string {
	s := ""
	for _, ev := range evs {
		if ev.Type == "assistant_delta" {
			var d struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			s += d.Text
		}
	}
	return s
}

func requireGapless(t *testing.T, evs []client.Event, from int64) {
	t.Helper()
	for i, ev := range evs {
		require.Equal(t, from+int64(i), ev.Seq, "event %d (%s)", i, ev.Type)
	}
}

func callErr(t *testing.T, c *client.Client, method string, params any) *client.Error {
	t.Helper()
	err := c.Call(tctx(t), method, params, nil)
	require.Error(t, err, method)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	return ce
}

// frameValidator checks frames against protocol/schema.json.
var frameValidator = sync.OnceValues(validate.New)

// checked returns opts (nil: the defaults) with every frame the server sends
// checked against protocol/schema.json; the test fails, at its end, on each
// frame that violates it.
func checked(t testing.TB, opts *client.Options) *client.Options {
	t.Helper()
	v, err := frameValidator()
	require.NoError(t, err, "compile protocol/schema.json")
	var o client.Options
	if opts != nil {
		o = *opts
	}
	var mu sync.Mutex
	var bad []error
	o.Check = func(method string, frame []byte) error {
		err := v.Frame(method, frame)
		if err != nil {
			mu.Lock()
			bad = append(bad, err)
			mu.Unlock()
		}
		return err
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, err := range bad {
			t.Errorf("a frame of the server violates protocol/schema.json: %v", err)
		}
	})
	return &o
}

// dialRaw connects without initializing; the caller closes it.
func dialRaw(ts *testServer) (*client.Client, error) {
	return client.Dial(context.Background(), ts.url, ts.token, nil)
}
