package ipc

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// slowConn reads at most step bytes, then pauses: a slow but steady reader.
type slowConn struct {
	net.Conn
	step  int
	pause time.Duration
}

func (c *slowConn) Read(p []byte) (int, error) {
	time.Sleep(c.pause)
	return c.Conn.Read(p[:min(len(p), c.step)])
}

func slowHTTPClient(step int, pause time.Duration) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(64 << 10) // little kernel buffering: the reader sets the pace
			}
			return &slowConn{Conn: c, step: step, pause: pause}, nil
		},
	}}
}

// TestStalledConnectionIsClosedOthersKeepReceiving: a client that stops
// reading is closed; another client of the same session receives the whole
// turn meanwhile, and a broadcast never waits on the stalled one.
func TestStalledConnectionIsClosedOthersKeepReceiving(t *testing.T) {
	text := strings.Repeat("s", 12<<20) // more than the kernel buffers of both ends
	ts := startServer(t,
		withProvider(scripted.New(scripted.Response{Text: text, ChunkSize: 64 << 10})),
		func(o *Options) { o.WriteTimeout = 2 * time.Second }, // a reading client never stalls that long
	)
	// The reading client checks no frame against the schema: validating
	// megabytes of text under -race on a loaded machine can pause its reads
	// for longer than the 2 s stall bound, and this test is about stalls.
	good, err := client.Dial(tctx(t), ts.url, ts.token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { good.Close() })
	_, err = good.Initialize(tctx(t), "good", "1", false)
	require.NoError(t, err)
	sid := ts.session(t, good, nil)

	// The stalled client reads nothing once its tiny notification buffer
	// is full: its socket stops taking bytes.
	stalled, err := client.Dial(tctx(t), ts.url, ts.token, &client.Options{NotifyBuffer: 1, HTTPClient: slowHTTPClient(4<<10, 0)})
	require.NoError(t, err)
	t.Cleanup(func() { stalled.Close() })
	_, err = stalled.Initialize(tctx(t), "stalled", "1", false)
	require.NoError(t, err)
	_, err = stalled.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	_, err = good.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = good.StartTurn(tctx(t), sid, "stream")
	require.NoError(t, err)
	require.Equal(t, text, textOf(collectTurn(t, good, sid)))

	// The server closes the stalled connection (it is gone from the
	// server's set) while the stalled client still reads nothing.
	for {
		ts.srv.mu.Lock()
		n := len(ts.srv.conns)
		ts.srv.mu.Unlock()
		if n == 1 {
			break
		}
		select {
		case <-tctx(t).Done():
			t.Fatal("the stalled connection was never closed")
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Now let the stalled client read again: it finds what the kernel held,
	// then the end of the connection.
	go func() {
		for range stalled.Notifications() {
		}
	}()
	select {
	case <-stalled.Done():
	case <-tctx(t).Done():
		t.Fatal("the stalled connection was never closed")
	}
	// The server is still fine for everyone else.
	var res protocol.SessionGetResult
	require.NoError(t, good.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &res))
}
