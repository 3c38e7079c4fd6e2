package ipc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// A session on a Responses-only endpoint is named too: naming goes through
// the API the turns use, not always Chat Completions.
func TestSessionNamingOnResponsesOnlyEndpoint(t *testing.T) {
	var chatCalls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/responses") {
			chatCalls.Add(1)
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["stream"] != true {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"resp_n","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"msg_n","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Responses title","annotations":[]}]}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[]}}`,
			`{"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"hi"}`,
			`{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[],"usage":{"input_tokens":3,"output_tokens":1,"total_tokens":4}}}`,
		} {
			var head struct{ Type string }
			_ = json.Unmarshal([]byte(ev), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, ev)
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv("RESPONLY_API_KEY", "sk-responses-only-0001")
	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "responly", "baseUrl": srv.URL + "/v1", "apiMode": "responses", "defaultModel": "m"}, nil))
	sid, err := c.CreateSession(tctx(t), ts.project(t, c), map[string]any{"provider": "responly", "vcs": "off"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "please refactor the parser")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Contains(t, string(evs[len(evs)-1].Data), `"completed"`)
	ev := nextOfType(t, c, sid, "session_named")
	require.JSONEq(t, `{"taskId":"","name":"Responses title","source":"auto"}`, string(ev.Data))
	require.Zero(t, chatCalls.Load(), "nothing went to Chat Completions")
}
