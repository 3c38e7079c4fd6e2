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

// Arrival numbers a connection's requests in the order they were read
// (a batch's in its order), whatever order their handlers run in; it is
// 0 outside a handler.
func TestArrivalIsReadOrder(t *testing.T) {
	var (
		mu  sync.Mutex
		got = map[int]uint64{}
	)
	methods := map[string]wsrpc.Handler{
		"initialize": func(_ context.Context, c *wsrpc.Conn, _ json.RawMessage) (any, error) {
			c.MarkInitialized()
			return map[string]any{}, nil
		},
		"note": func(ctx context.Context, _ *wsrpc.Conn, raw json.RawMessage) (any, error) {
			var p struct{ I int }
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, err
			}
			mu.Lock()
			got[p.I] = wsrpc.Arrival(ctx)
			mu.Unlock()
			return map[string]any{}, nil
		},
	}
	url, _ := serve(t, methods)
	ws := dial(t, url)
	require.Nil(t, roundTrip(t, ws, `{"jsonrpc":"2.0","id":0,"method":"initialize"}`).Error) // arrival 1

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"note","params":{"i":%d}}`, i+1, i)
	}
	for i := range 3 { // arrivals 2, 3, 4
		require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(req(i))))
	}
	batch := "[" + req(3) + "," + `{"jsonrpc":"2.0","method":"note","params":{"i":4}}` + "," + req(5) + "]" // 5, 6, 7
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(batch)))
	for range 4 { // three answers and the batch's
		_, _, err := ws.Read(ctx)
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[int]uint64{0: 2, 1: 3, 2: 4, 3: 5, 4: 6, 5: 7}, got)
	require.Zero(t, wsrpc.Arrival(context.Background()))
}
