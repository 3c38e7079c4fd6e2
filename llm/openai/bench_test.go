package openai

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkChatStream measures parsing a long Chat Completions SSE stream
// (2,000 content deltas) served by httptest, end to end through the provider.
func BenchmarkChatStream(b *testing.B) {
	const deltas = 2000
	var buf bytes.Buffer
	for i := range deltas {
		buf.WriteString("data: " + chatChunk(`{"content":"token`+itoa(i%10)+` "}`, "") + "\n\n")
	}
	buf.WriteString("data: " + chatChunk(`{}`, "stop") + "\n\n")
	buf.WriteString("data: " + chatUsageChunk + "\n\ndata: [DONE]\n\n")
	body := buf.Bytes()
	f := newFakeAPI(b)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	})
	p := f.provider(func(o *Options) { o.APIMode = ModeChat })
	req := userReq("gpt-4o", "bench")
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	chunks := 0
	for b.Loop() {
		n := 0
		for ch, err := range p.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if strings.HasPrefix(ch.Content, "token") {
				n++
			}
		}
		if n != deltas {
			b.Fatalf("got %d deltas", n)
		}
		chunks += n
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}
