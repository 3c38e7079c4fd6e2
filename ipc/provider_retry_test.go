package ipc

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProviderRetriesFromEnv: the production provider reads its retry
// settings from the environment. A model endpoint that answers 500, then
// resets the connection, then streams, gives one turn with an llm_retry
// event per retry and the streamed text.
func TestProviderRetriesFromEnv(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		switch n.Add(1) {
		case 1: // a 5xx: retried with an llm_retry event (OPENAI_MAX_RETRIES)
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
			return
		case 2: // a reset connection: retried with an llm_retry event (NETWORK_RETRY_MAX)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"after retries\"},\"finish_reason\":null}]}\n\n")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_API_KEY", "sk-retry-test-0001")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_FORCE_API_MODE", "chat")
	t.Setenv("OPENAI_MODEL", "m-retry")
	t.Setenv("OPENAI_MAX_RETRIES", "1")
	t.Setenv("NETWORK_RETRY_MAX", "2")
	t.Setenv("NETWORK_RETRY_BASE_MS", "1")

	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	pid := ts.project(t, c)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Equal(t, "after retries", textOf(evs))
	require.Equal(t, 2, countType(evs, "llm_retry"), "the status and the network retry are announced")
	require.Equal(t, 0, countType(evs, "error"))
	require.GreaterOrEqual(t, int(n.Load()), 3)
}
