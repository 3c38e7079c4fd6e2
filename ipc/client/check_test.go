package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// TestCheckSeesEveryFrame: Options.Check gets every frame with the method of
// the call it answers, and what it reports is kept in Violations.
func TestCheckSeesEveryFrame(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var req struct {
			ID int64 `json:"id"`
		}
		_ = json.Unmarshal(data, &req)
		_ = ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"session.dropped","params":{"sessionId":"s","lastSeq":1,"reason":"fell behind"}}`))
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"turnId": "t"}})
		_ = ws.Write(ctx, websocket.MessageText, b)
		_, _, _ = ws.Read(ctx) // until the client closes
	}))
	defer srv.Close()

	var mu sync.Mutex
	var seen []string
	check := func(method string, frame []byte) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, method+" "+string(frame))
		if method == "turn.start" && !strings.Contains(string(frame), `"queued"`) {
			return errMissingQueued
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), "", &Options{Check: check})
	require.NoError(t, err)
	_, err = c.StartTurn(ctx, "s", "hi")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	require.True(t, strings.HasPrefix(seen[0], ` {"jsonrpc":"2.0","method":"session.dropped"`), seen[0])
	require.Equal(t, `turn.start {"id":1,"jsonrpc":"2.0","result":{"turnId":"t"}}`, seen[1])
	require.Equal(t, []error{errMissingQueued}, c.Violations())
}

type checkError string

func (e checkError) Error() string { return string(e) }

const errMissingQueued = checkError("turn.start result without queued")
