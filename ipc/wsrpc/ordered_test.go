package wsrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
)

// Ordered methods take effect in the order they were sent. The first one
// is held until every request was written: with concurrent dispatch the
// later ones would run (and be recorded) while it waits; ordered, they wait
// behind it in the socket.
func TestOrderedMethodsRunInArrivalOrder(t *testing.T) {
	const n = 50
	var (
		mu   sync.Mutex
		got  []int
		hold = make(chan struct{})
		once sync.Once
	)
	entered := make(chan struct{})
	methods := map[string]wsrpc.Handler{
		"initialize": func(_ context.Context, c *wsrpc.Conn, _ json.RawMessage) (any, error) {
			c.MarkInitialized()
			return map[string]any{}, nil
		},
		"key": func(_ context.Context, _ *wsrpc.Conn, raw json.RawMessage) (any, error) {
			var p struct{ I int }
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, err
			}
			if p.I == 0 {
				once.Do(func() { close(entered) })
				<-hold
			}
			mu.Lock()
			got = append(got, p.I)
			mu.Unlock()
			return map[string]any{}, nil
		},
	}
	url, _ := serveOrdered(t, methods, map[string]bool{"key": true})
	ws := dial(t, url)
	require.Nil(t, roundTrip(t, ws, `{"jsonrpc":"2.0","id":0,"method":"initialize"}`).Error)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"key","params":{"i":%d}}`, i+1, i)
		require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(req)))
	}
	<-entered
	close(hold)
	for range n {
		require.Nil(t, read(t, ws).Error)
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, want, got)
}

// An ordered method takes the same gate as any other: before initialize
// it is refused with -32001 and its handler never runs.
func TestOrderedMethodBeforeInitializeIsRefused(t *testing.T) {
	ran := make(chan struct{}, 1)
	methods := map[string]wsrpc.Handler{
		"initialize": func(_ context.Context, c *wsrpc.Conn, _ json.RawMessage) (any, error) {
			c.MarkInitialized()
			return map[string]any{}, nil
		},
		"key": func(context.Context, *wsrpc.Conn, json.RawMessage) (any, error) {
			ran <- struct{}{}
			return map[string]any{}, nil
		},
	}
	url, _ := serveOrdered(t, methods, map[string]bool{"key": true})
	ws := dial(t, url)
	f := roundTrip(t, ws, `{"jsonrpc":"2.0","id":1,"method":"key","params":{"i":0}}`)
	require.NotNil(t, f.Error)
	require.Equal(t, wsrpc.CodeNotInitialized, f.Error.Code)
	require.Nil(t, roundTrip(t, ws, `{"jsonrpc":"2.0","id":2,"method":"initialize"}`).Error)
	require.Nil(t, roundTrip(t, ws, `{"jsonrpc":"2.0","id":3,"method":"key","params":{"i":1}}`).Error)
	require.Len(t, ran, 1, "the handler ran once: after initialize")
}
