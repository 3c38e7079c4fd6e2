package ipc

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShutdownCancelsNaming: Close with a session-naming request in flight
// cancels it instead of waiting for it (the naming call never answers on
// its own here), and returns before its deadline.
func TestShutdownCancelsNaming(t *testing.T) {
	naming := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Accept") != "text/event-stream" && !strings.Contains(readBody(r), `"stream":true`) {
			naming <- struct{}{}
			<-r.Context().Done() // a naming call that never answers
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_API_KEY", "sk-naming-test-0001")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_FORCE_API_MODE", "chat")
	t.Setenv("OPENAI_MODEL", "m-name")

	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	require.Equal(t, "done", textOf(collectTurn(t, c, sid)))
	<-naming // the naming request is in flight

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, ts.srv.Close(ctx), "Close did not wait for the naming call")
}

func readBody(r *http.Request) string {
	b := make([]byte, 64<<10)
	n, _ := r.Body.Read(b)
	return string(b[:n])
}
