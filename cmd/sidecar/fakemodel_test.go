package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// noBus points the keychain at no session bus (a headless machine).
const noBus = "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/zqagent-bus"

// fakeModel is an OpenAI-compatible endpoint (Chat Completions) that plays
// a plan: each streamed request takes the next step (the last one repeats).
// Session-naming requests (not streamed) are answered with a name, or,
// with hangNaming, never (until the client goes away).
type fakeModel struct {
	srv        *httptest.Server
	hangNaming bool
	// usage, when set, is the Chat Completions usage object every answer
	// reports (a streamed one in its last chunk); headers are sent with
	// every answer (x-ratelimit-*).
	usage   string
	headers map[string]string

	mu sync.Mutex // guards plan, streams, namings, namingAt, usage, headers, bodies
	// plan: "401", "429", "500", "reset", "stall", "call:<name>:<arguments
	// JSON>" (one tool call), else a text to stream.
	plan     []string
	bodies   [][]byte // the streamed requests' bodies, in order
	streams  int
	namings  int
	namingAt chan struct{} // closed at the first naming request
}

func newFakeModel(t *testing.T, plan ...string) *fakeModel {
	t.Helper()
	f := &fakeModel{plan: plan, namingAt: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

// env is the environment of a sidecar that talks to f.
func (f *fakeModel) env() []string {
	return []string{"OPENAI_BASE_URL=" + f.srv.URL + "/v1", "OPENAI_FORCE_API_MODE=chat", "OPENAI_MODEL=m-fake", "ZQAGENT_SCRIPT="}
}

// requests returns the bodies of the streamed requests so far.
func (f *fakeModel) requests() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
}

func (f *fakeModel) counts() (streams, namings int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams, f.namings
}

func (f *fakeModel) handle(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(b, &body)
	f.mu.Lock()
	for k, v := range f.headers {
		w.Header().Set(k, v)
	}
	usage := ""
	if f.usage != "" {
		usage = `,"usage":` + f.usage
	}
	if !body.Stream {
		f.namings++
		if f.namings == 1 {
			close(f.namingAt)
		}
		hang := f.hangNaming
		f.mu.Unlock()
		if hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"n","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"A fake name"},"finish_reason":"stop"}]`+usage+`}`)
		return
	}
	step := "hello"
	if len(f.plan) > 0 {
		step = f.plan[min(f.streams, len(f.plan)-1)]
	}
	f.streams++
	n := f.streams
	f.bodies = append(f.bodies, b)
	f.mu.Unlock()
	kind, arg, _ := strings.Cut(step, ":")
	if kind != "call" {
		kind = step
	}
	switch kind {
	case "401":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	case "429":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"slow down","type":"rate_limit"}}`)
	case "500":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"overloaded"}}`)
	case "reset":
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	case "stall": // headers, then nothing until the client gives up
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case "call":
		w.Header().Set("Content-Type", "text/event-stream")
		name, args, _ := strings.Cut(arg, ":")
		d, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0,
			"delta": map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
				"function": map[string]any{"name": name, "arguments": args}}}}, "finish_reason": nil}}})
		fmt.Fprintf(w, "data: %s\n\n", d)
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta, finish string) {
			d, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, "delta": json.RawMessage(delta), "finish_reason": json.RawMessage(finish)}}})
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
		c, _ := json.Marshal(step)
		chunk(`{"role":"assistant","content":`+string(c)+`}`, "null")
		chunk(`{}`, `"stop"`)
		if usage != "" {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[]%s}\n\n", usage)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func startTurn(t *testing.T, e *env, text string) {
	t.Helper()
	_, err := e.c.StartTurn(tctx(t), e.sid, text)
	require.NoError(t, err)
}

// setupEnv is setup with a whole environment (added to os.Environ).
func setupEnv(t *testing.T, envv []string, sessionExtra map[string]any) *env {
	t.Helper()
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: filepath.Join(t.TempDir(), "proj")}
	require.NoError(t, os.MkdirAll(e.projDir, 0o755))
	e.p = spawn(t, e.dataDir, envv...)
	e.c = e.p.connect(t)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	e.sid, err = e.c.CreateSession(tctx(t), pid, sessionExtra)
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	return e
}
