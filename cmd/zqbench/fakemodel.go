package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fakeModel is a local OpenAI-compatible endpoint (Chat Completions,
// streamed as SSE). The user's last message is the script of the answer:
//
//	short         one short text answer
//	stream N      N one-character content deltas
//	tools N       N rounds of one read_file call, then a text answer
//
// A request without stream (the session-naming call) gets a short title.
type fakeModel struct {
	srv *httptest.Server

	mu       sync.Mutex // guards requests
	requests []time.Time
}

func newFakeModel() *fakeModel {
	f := &fakeModel{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	return f
}

// requestAfter returns when the first request after t arrived (zero when
// none did).
func (f *fakeModel) requestAfter(t time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.requests {
		if r.After(t) {
			return r
		}
	}
	return time.Time{}
}

// reset forgets the recorded requests.
func (f *fakeModel) reset() {
	f.mu.Lock()
	f.requests = nil
	f.mu.Unlock()
}

func (f *fakeModel) URL() string { return f.srv.URL + "/v1" }

func (f *fakeModel) Close() { f.srv.Close() }

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns a message's content as text (a string or a list of parts).
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (f *fakeModel) handle(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, time.Now())
	f.mu.Unlock()
	data, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var body struct {
		Stream   bool          `json:"stream"`
		Messages []chatMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"n","object":"chat.completion","model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"Bench session"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
		return
	}
	var script string
	results := 0 // tool results since the last user message
	for _, m := range body.Messages {
		switch m.Role {
		case "user":
			script, results = m.text(), 0
		case "tool":
			results++
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 32<<10)
	sse := &sseWriter{w: bw}
	verb, arg, _ := strings.Cut(strings.TrimSpace(script), " ")
	n, _ := strconv.Atoi(arg)
	switch verb {
	case "stream":
		sse.role()
		for range n {
			sse.content("x")
		}
		sse.finish("stop")
	case "tools":
		if results < n {
			sse.toolCall(fmt.Sprintf("call_%d", results), "read_file", `{"path":"notes.txt"}`)
			sse.finish("tool_calls")
			break
		}
		sse.role()
		sse.content("done")
		sse.finish("stop")
	default:
		sse.role()
		sse.content("ok, ")
		sse.content("noted.")
		sse.finish("stop")
	}
	sse.usage()
	fmt.Fprint(bw, "data: [DONE]\n\n")
	_ = bw.Flush()
}

// streamText is what "stream N" streams.
func streamText(n int) string { return strings.Repeat("x", n) }

// sseWriter writes Chat Completions chunks.
type sseWriter struct{ w *bufio.Writer }

const chunkHead = `data: {"id":"c","object":"chat.completion.chunk","model":"bench","choices":[{"index":0,"delta":`

func (s *sseWriter) role() {
	fmt.Fprint(s.w, chunkHead+`{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
}

func (s *sseWriter) content(text string) {
	q, _ := json.Marshal(text)
	fmt.Fprintf(s.w, chunkHead+`{"content":%s},"finish_reason":null}]}`+"\n\n", q)
}

func (s *sseWriter) toolCall(id, name, args string) {
	q, _ := json.Marshal(args)
	fmt.Fprintf(s.w, chunkHead+`{"role":"assistant","tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":null}]}`+"\n\n", id, name, q)
}

func (s *sseWriter) finish(reason string) {
	fmt.Fprintf(s.w, chunkHead+`{},"finish_reason":%q}]}`+"\n\n", reason)
}

func (s *sseWriter) usage() {
	fmt.Fprint(s.w, `data: {"id":"c","object":"chat.completion.chunk","model":"bench","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}`+"\n\n")
}
