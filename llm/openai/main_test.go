package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/llm"
)

func TestMain(m *testing.M) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "SOCKS5_PROXY", "OPENAI_FORCE_API_MODE",
		"OPENAI_TIMEOUT_MS", "OPENAI_STREAM_IDLE_MS", "OPENAI_MAX_RETRIES", "NETWORK_RETRY_MAX", "NETWORK_RETRY_BASE_MS"} {
		os.Unsetenv(k)
	}
	goleak.VerifyTestMain(m)
}

const testKey = "sk-test-SECRET-0123456789abcdef"

// fakeAPI is an httptest server speaking both APIs. Handlers per path write
// the answer; every request's path, headers and decoded body are recorded.
type fakeAPI struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex // guards requests, handlers
	requests []recorded
	handlers map[string]http.HandlerFunc
}

type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    string
}

func newFakeAPI(t testing.TB) *fakeAPI {
	f := &fakeAPI{t: t, handlers: map[string]http.HandlerFunc{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) handle(path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[path] = h
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := recorded{Path: r.URL.Path, Header: r.Header.Clone(), Raw: string(raw)}
	_ = json.Unmarshal(raw, &rec.Body)
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	h := f.handlers[r.URL.Path]
	f.mu.Unlock()
	if h == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"message":"Invalid URL (POST %s)","type":"invalid_request_error","param":null,"code":null}}`, r.URL.Path)
		return
	}
	h(w, r)
}

func (f *fakeAPI) all() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func (f *fakeAPI) count(path string) int {
	n := 0
	for _, r := range f.all() {
		if r.Path == path {
			n++
		}
	}
	return n
}

func (f *fakeAPI) last(path string) recorded {
	var out recorded
	for _, r := range f.all() {
		if r.Path == path {
			out = r
		}
	}
	return out
}

// provider returns a provider pointed at the fake with fast retries.
func (f *fakeAPI) provider(mod func(*Options)) *Provider {
	o := Options{
		BaseURL:          f.srv.URL + "/v1",
		APIKey:           func(context.Context) (string, error) { return testKey, nil },
		StreamIdle:       30 * time.Second,
		NetworkRetryMax:  2,
		NetworkRetryBase: time.Millisecond,
		MaxRetries:       2,
	}
	if mod != nil {
		mod(&o)
	}
	p := New(o)
	f.t.Cleanup(p.CloseIdleConnections)
	return p
}

// sse writes server-sent events; each frame is flushed.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	return sse{w: w}
}

// data writes a Chat Completions frame.
func (s sse) data(payload string) {
	fmt.Fprintf(s.w, "data: %s\n\n", payload)
	s.w.(http.Flusher).Flush()
}

// event writes a Responses API frame; the type is taken from the payload.
func (s sse) event(payload string) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(payload), &head); err != nil {
		panic("bad test event: " + payload)
	}
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", head.Type, payload)
	s.w.(http.Flusher).Flush()
}

func jsonError(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// chatChunk builds one chat.completion.chunk with a delta for choice 0.
func chatChunk(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fr + `}]}`
}

const chatUsageChunk = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}}}`

// result is everything a stream yielded.
type result struct {
	content, reasoning string
	chunks             []llm.Chunk
	retries            []llm.RetryInfo
	final              llm.Chunk
	err                error
}

func collect(ctx context.Context, p llm.Provider, req llm.Request) result {
	var r result
	for ch, err := range p.Stream(ctx, req) {
		if err != nil {
			r.err = err
			break
		}
		r.chunks = append(r.chunks, ch)
		if ch.Retry != nil {
			r.retries = append(r.retries, *ch.Retry)
			continue
		}
		r.content += ch.Content
		r.reasoning += ch.Reasoning
		if ch.FinishReason != "" || len(ch.ToolCalls) > 0 || ch.Usage != nil {
			r.final = ch
		}
	}
	return r
}

func userReq(model, text string) llm.Request {
	return llm.Request{Model: model, ReqID: "req-1", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a test."},
		{Role: llm.RoleUser, Content: text},
	}}
}

// chatOK answers a chat stream with "Hello world" and usage.
func chatOK(w http.ResponseWriter, _ *http.Request) {
	s := startSSE(w)
	s.data(chatChunk(`{"role":"assistant","content":""}`, ""))
	for _, piece := range []string{"Hel", "lo", " world"} {
		s.data(chatChunk(`{"content":`+quote(piece)+`}`, ""))
	}
	s.data(chatChunk(`{}`, "stop"))
	s.data(chatUsageChunk)
	s.data("[DONE]")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func hasText(haystack, needle string) bool { return strings.Contains(haystack, needle) }
