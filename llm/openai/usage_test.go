package openai

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// rateHeaders are the x-ratelimit-* headers an OpenAI endpoint sends.
func rateHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("x-ratelimit-limit-requests", "500")
	h.Set("x-ratelimit-remaining-requests", "499")
	h.Set("x-ratelimit-reset-requests", "120ms")
	h.Set("x-ratelimit-limit-tokens", "30000")
	h.Set("x-ratelimit-remaining-tokens", "0")
	h.Set("x-ratelimit-reset-tokens", "6m0s")
}

func requireRates(t *testing.T, rl *llm.RateLimits, before time.Time) {
	t.Helper()
	require.NotNil(t, rl, "the endpoint sent x-ratelimit-* headers")
	require.Equal(t, int64(500), *rl.Requests.Limit)
	require.Equal(t, int64(499), *rl.Requests.Remaining)
	require.Equal(t, int64(30000), *rl.Tokens.Limit)
	require.Equal(t, int64(0), *rl.Tokens.Remaining, "0 left is sent, not absent")
	require.WithinRange(t, rl.Requests.ResetAt, before.Add(120*time.Millisecond), time.Now().Add(120*time.Millisecond))
	require.WithinRange(t, rl.Tokens.ResetAt, before.Add(6*time.Minute), time.Now().Add(6*time.Minute))
}

// TestUsageShapes: every usage shape an endpoint sends is read as input
// (cached part included), cached input, output (reasoning included) and
// reasoning, on streams and on Chat, with the rate-limit headers.
func TestUsageShapes(t *testing.T) {
	want := &llm.Usage{PromptTokens: 100, CachedTokens: 40, CompletionTokens: 30, ReasoningTokens: 12, TotalTokens: 130}
	chatStream := func(usage string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			rateHeaders(w)
			s := startSSE(w)
			s.data(chatChunk(`{"content":"hi"}`, "stop"))
			s.data(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":` + usage + `}`)
			s.data("[DONE]")
		}
	}
	responsesStream := func(w http.ResponseWriter, _ *http.Request) {
		rateHeaders(w)
		s := startSSE(w)
		s.event(`{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"hi"}`)
		s.event(`{"type":"response.completed","response":{"id":"r","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":130}}}`)
	}
	for _, tc := range []struct {
		name, mode string
		path       string
		h          http.HandlerFunc
	}{
		{"chat completions", ModeChat, "/v1/chat/completions", chatStream(`{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":12}}`)},
		{"deepseek cache hits", ModeChat, "/v1/chat/completions", chatStream(`{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_cache_hit_tokens":40,"prompt_cache_miss_tokens":60,"completion_tokens_details":{"reasoning_tokens":12}}`)},
		{"responses", ModeResponses, "/v1/responses", responsesStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t)
			f.handle(tc.path, tc.h)
			before := time.Now()
			r := collect(context.Background(), f.provider(func(o *Options) { o.APIMode = tc.mode }), userReq("gpt-5", "hi"))
			require.NoError(t, r.err)
			require.Equal(t, want, r.final.Usage)
			requireRates(t, r.final.RateLimits, before)
		})
	}

	// Chat (titles, summaries): the non-streamed shapes of both APIs.
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
		rateHeaders(w)
		jsonError(w, 200, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"T"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":12}}}`)
	})
	f.handle("/v1/responses", func(w http.ResponseWriter, _ *http.Request) {
		rateHeaders(w)
		jsonError(w, 200, `{"id":"r","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"T","annotations":[]}]}],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":130}}`)
	})
	for _, mode := range []string{ModeChat, ModeResponses} {
		before := time.Now()
		resp, err := f.provider(func(o *Options) { o.APIMode = mode }).Chat(context.Background(), llm.ChatRequest{Model: "gpt-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		require.NoError(t, err, mode)
		require.Equal(t, "T", resp.Text, mode)
		require.Equal(t, want, resp.Usage, mode)
		requireRates(t, resp.RateLimits, before)
	}
}

// TestRateLimitsBeforeAnError: a refused request's headers reach the
// engine before the error (they say when the budget is back).
func TestRateLimitsBeforeAnError(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
		rateHeaders(w)
		jsonError(w, http.StatusBadRequest, `{"error":{"message":"bad","type":"invalid_request_error"}}`)
	})
	before := time.Now()
	r := collect(context.Background(), f.provider(func(o *Options) { o.APIMode = ModeChat }), userReq("gpt-4o", "hi"))
	require.Error(t, r.err)
	require.Len(t, r.chunks, 1)
	requireRates(t, r.chunks[0].RateLimits, before)

	g := newFakeAPI(t)
	g.handle("/v1/chat/completions", chatOK)
	r = collect(context.Background(), g.provider(func(o *Options) { o.APIMode = ModeChat }), userReq("gpt-4o", "hi"))
	require.NoError(t, r.err)
	require.Nil(t, r.final.RateLimits, "no headers, no rate limits")
}
