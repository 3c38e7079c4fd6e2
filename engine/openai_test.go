package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm/openai"
	"github.com/zqagent/sidecar/llm/prices"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// fakeOpenAI is a real HTTP server speaking both OpenAI streaming formats.
// Models named "chat-*" have no Responses API (404 there); others use it.
type fakeOpenAI struct {
	mu       sync.Mutex
	bodies   map[string][]map[string]any // path → request bodies
	stallFor string                      // a model whose stream stalls after one delta
}

func (f *fakeOpenAI) handler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	f.mu.Lock()
	f.bodies[r.URL.Path] = append(f.bodies[r.URL.Path], body)
	f.mu.Unlock()
	model, _ := body["model"].(string)
	h := w.Header()
	h.Set("x-ratelimit-limit-requests", "500")
	h.Set("x-ratelimit-remaining-requests", "499")
	h.Set("x-ratelimit-reset-requests", "120ms")
	h.Set("x-ratelimit-limit-tokens", "30000")
	h.Set("x-ratelimit-remaining-tokens", "29000")
	h.Set("x-ratelimit-reset-tokens", "2s")
	switch {
	case strings.HasSuffix(r.URL.Path, "/responses") && strings.HasPrefix(model, "chat-"):
		http.Error(w, `{"error":{"message":"Not found","type":"invalid_request_error"}}`, http.StatusNotFound)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		f.responses(w, r, body, model)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		f.chat(w, body)
	default:
		http.NotFound(w, r)
	}
}

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

// hasToolResult reports whether the request already carries a tool result.
func hasToolResult(body map[string]any) bool {
	s, _ := json.Marshal(body)
	return strings.Contains(string(s), `"function_call_output"`) || strings.Contains(string(s), `"role":"tool"`)
}

func (f *fakeOpenAI) responses(w http.ResponseWriter, r *http.Request, body map[string]any, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress"}})
	if model == f.stallFor {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "m1", "output_index": 0, "content_index": 0, "delta": "stalling"})
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
		return
	}
	if !hasToolResult(body) {
		sse(w, "response.reasoning_summary_text.delta", map[string]any{"type": "response.reasoning_summary_text.delta", "item_id": "r1", "output_index": 0, "summary_index": 0, "delta": "need a tool"})
		item := map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_r1", "name": "echo", "arguments": ""}
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 1, "item": item})
		for _, part := range []string{`{"x"`, `:"fr`, `om responses"}`} {
			sse(w, "response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": part})
		}
		item["arguments"] = `{"x":"from responses"}`
		sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 1, "item": item})
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "status": "completed", "output": []any{item}, "usage": map[string]any{"input_tokens": 20, "input_tokens_details": map[string]any{"cached_tokens": 8}, "output_tokens": 7, "output_tokens_details": map[string]any{"reasoning_tokens": 3}, "total_tokens": 27}}})
		return
	}
	for _, d := range []string{"All ", "done."} {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "m1", "output_index": 0, "content_index": 0, "delta": d})
	}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_2", "status": "completed", "usage": map[string]any{"input_tokens": 30, "output_tokens": 2, "total_tokens": 32}}})
}

func (f *fakeOpenAI) chat(w http.ResponseWriter, body map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		sse(w, "", map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": body["model"], "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	if !hasToolResult(body) {
		chunk(map[string]any{"role": "assistant", "reasoning_content": "think"}, nil)
		// Two parallel calls, each split over several deltas.
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_a", "type": "function", "function": map[string]any{"name": "echo", "arguments": ""}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 1, "id": "call_b", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"x":`}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": `{"x":"one"}`}}}}, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 1, "function": map[string]any{"arguments": `"two"}`}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	} else {
		chunk(map[string]any{"role": "assistant", "content": "Chat "}, nil)
		chunk(map[string]any{"content": "done."}, nil)
		chunk(map[string]any{}, "stop")
	}
	sse(w, "", map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{}, "usage": map[string]any{"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15, "prompt_tokens_details": map[string]any{"cached_tokens": 5}, "completion_tokens_details": map[string]any{"reasoning_tokens": 1}}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func openaiEngine(t *testing.T, model string, opts openai.Options) (*engine.Engine, *fakeOpenAI) {
	t.Helper()
	return openaiEngineWith(t, model, opts, nil)
}

func openaiEngineWith(t *testing.T, model string, opts openai.Options, mod func(*engine.Options)) (*engine.Engine, *fakeOpenAI) {
	t.Helper()
	f := &fakeOpenAI{bodies: map[string][]map[string]any{}, stallFor: "stall-model"}
	srv := httptest.NewServer(http.HandlerFunc(f.handler))
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL + "/v1"
	opts.APIKey = func(context.Context) (string, error) { return "sk-test", nil }
	p := openai.New(opts)
	t.Cleanup(p.CloseIdleConnections)
	ws, err := confine.New(t.TempDir())
	require.NoError(t, err)
	reg := tools.NewRegistry()
	reg.MustRegister(tools.Spec{Name: "echo", Schema: schema("echo"), Meta: tools.Metadata{RiskLevel: tools.RiskLow, Class: tools.ClassRead}, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		var a struct{ X string }
		if err := tools.DecodeArgs(c.Args, &a); err != nil {
			return nil, err
		}
		return "echoed " + a.X, nil
	}})
	eo := engine.Options{Provider: p, Registry: reg, Permissions: permission.New(permission.Options{Workspace: ws, Mode: permission.ModeInteractive}), Model: model, Instructions: "sys"}
	if mod != nil {
		mod(&eo)
	}
	e, err := engine.New(eo)
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	return e, f
}

func TestEngineOverResponsesSSE(t *testing.T) {
	e, f := openaiEngine(t, "gpt-test", openai.Options{})
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "hi"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	fin := find[protocol.ToolFinishedData](evs)
	require.Len(t, fin, 1)
	require.Equal(t, protocol.ToolOK, fin[0].Status)
	require.Equal(t, "echoed from responses", fin[0].ResultPreview)
	msgs := find[protocol.AssistantMessageData](evs)
	require.Equal(t, "need a tool", msgs[0].Reasoning)
	require.Equal(t, 27, msgs[0].Usage.TotalTokens)
	require.Equal(t, "All done.", msgs[1].Text)
	require.Len(t, f.bodies["/v1/responses"], 2)
	require.Empty(t, f.bodies["/v1/chat/completions"])
	second, _ := json.Marshal(f.bodies["/v1/responses"][1])
	require.Contains(t, string(second), "echoed from responses", "the tool result went back to the model")
}

func TestEngineFallsBackToChatSSE(t *testing.T) {
	e, f := openaiEngine(t, "chat-only", openai.Options{})
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "hi"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	fin := find[protocol.ToolFinishedData](evs)
	require.Len(t, fin, 2, "two parallel calls assembled from split deltas")
	previews := []string{fin[0].ResultPreview, fin[1].ResultPreview}
	require.ElementsMatch(t, []string{"echoed one", "echoed two"}, previews)
	require.Equal(t, "Chat done.", find[protocol.AssistantMessageData](evs)[1].Text)
	// The 404 on /responses is cached for the model: the second request of
	// the turn goes straight to chat.
	require.Len(t, f.bodies["/v1/responses"], 1)
	require.Len(t, f.bodies["/v1/chat/completions"], 2)
}

func TestEngineStalledStreamHitsWatchdog(t *testing.T) {
	e, _ := openaiEngine(t, "stall-model", openai.Options{StreamIdle: 300 * time.Millisecond, NetworkRetryMax: -1})
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "hi"}}))
	require.Equal(t, protocol.TurnError, last(evs).Status)
	errs := find[protocol.EventErrorData](evs)
	require.Len(t, errs, 1)
	require.True(t, errs[0].Retriable)
	require.Equal(t, "network", errs[0].ErrorType)
}

// TestEngineUsageOverSSE: the usage events and rate limits of a turn over a
// real HTTP endpoint, in both API shapes: the usage split (cached input,
// reasoning) read from each, priced from the default table (gpt-4.1) or a
// provider's own price (chat-only), and the x-ratelimit-* headers.
func TestEngineUsageOverSSE(t *testing.T) {
	half := 0.5
	for _, tc := range []struct {
		model      string
		first, end protocol.TokenCounts
		price      prices.Price
	}{
		{"gpt-4.1", counts(20, 8, 7, 3), counts(30, 0, 2, 0), prices.Price{Input: 2, CachedInput: &half, Output: 8}},
		{"chat-only", counts(11, 5, 4, 1), counts(11, 5, 4, 1), prices.Price{Input: 3, Output: 4}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			e, _ := openaiEngineWith(t, tc.model, openai.Options{}, func(o *engine.Options) {
				tab, err := prices.Default().With(map[string]prices.Price{"chat-only": {Input: 3, Output: 4}})
				require.NoError(t, err)
				o.Prices = tab
			})
			before := time.Now()
			evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "hi"}}))
			require.Equal(t, protocol.TurnCompleted, last(evs).Status)
			us := find[protocol.UsageData](evs)
			require.Len(t, us, 2)
			require.Equal(t, tc.first, us[0].Response)
			require.Equal(t, tc.end, us[1].Response)
			require.Equal(t, tc.first.Add(tc.end), *us[1].Turn)
			require.Equal(t, tc.first.Add(tc.end), us[1].Session)
			want := tc.price.Cost(usageOf(tc.first)) + tc.price.Cost(usageOf(tc.end))
			require.Positive(t, want)
			require.InDelta(t, want, *us[1].Cost.Session, 1e-12)
			reqs := find[protocol.LLMRequestData](evs)
			rls := find[protocol.RateLimitsData](evs)
			require.Len(t, rls, 2)
			for i, rl := range rls {
				require.Equal(t, reqs[i].ReqID, rl.ReqID)
				require.Equal(t, int64(500), *rl.Requests.Limit)
				require.Equal(t, int64(29000), *rl.Tokens.Remaining)
				at, err := time.Parse(time.RFC3339Nano, rl.Tokens.ResetAt)
				require.NoError(t, err)
				require.WithinRange(t, at, before.Add(2*time.Second), time.Now().Add(2*time.Second))
			}
		})
	}
}
