package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

func TestHTTPErrorsAreClassified(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		body     string
		kind     llm.Kind
		attempts int // MaxRetries is 2: 429 and 5xx are tried three times
	}{
		{"401", 401, `{"error":{"message":"Incorrect API key provided: sk-test-S***cdef.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, llm.KindAuth, 1},
		{"429", 429, `{"error":{"message":"Rate limit reached for gpt-5","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, llm.KindRateLimit, 3},
		{"500", 500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, llm.KindServer, 3},
		{"502 html", 502, `<html><body>Bad Gateway</body></html>`, llm.KindServer, 3},
		{"400 overflow", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, llm.KindContextOverflow, 1},
		{"400 other", 400, `{"error":{"message":"Invalid 'messages[1].content': string too long.","type":"invalid_request_error","param":null,"code":null}}`, llm.KindBadRequest, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{ModeAuto, ModeChat} {
				f := newFakeAPI(t)
				fail := func(w http.ResponseWriter, r *http.Request) { jsonError(w, tc.status, tc.body) }
				f.handle("/v1/responses", fail)
				f.handle("/v1/chat/completions", fail)
				r := collect(context.Background(), f.provider(func(o *Options) { o.APIMode = mode }), userReq("gpt-5", "hi"))
				var le *llm.Error
				require.True(t, errors.As(r.err, &le), "want *llm.Error, got", r.err)
				require.Equal(t, tc.kind, le.Kind, mode, r.err)
				require.Equal(t, tc.status, le.Status, mode)
				require.True(t, !hasText(le.Error(), testKey), "the key never appears in errors")
				used := "/v1/responses"
				if mode == ModeChat {
					used = "/v1/chat/completions"
				}
				require.Equal(t, tc.attempts, f.count(used), mode, " attempts")
				require.Equal(t, tc.attempts, len(f.all()), mode, ": 401/429/5xx/overflow never fall back")
				require.Equal(t, tc.attempts-1, len(r.retries), "each 429/5xx retry is announced")
				for i, ri := range r.retries {
					require.Equal(t, i+1, ri.Attempt)
					require.Equal(t, 2, ri.Max)
					require.Contains(t, ri.Reason, fmt.Sprintf("HTTP %d", tc.status))
				}
			}
		})
	}
}

func TestMidStreamChatErrorIsClassified(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.data(chatChunk(`{"content":"par"}`, ""))
		s.data(`{"error":{"message":"Rate limit exceeded mid-stream","type":"rate_limit_error","code":"rate_limit_exceeded"}}`)
	})
	r := collect(context.Background(), f.provider(func(o *Options) { o.APIMode = ModeChat }), userReq("gpt-4o", "hi"))
	require.Equal(t, "par", r.content)
	require.Equal(t, llm.KindRateLimit, llm.KindOf(r.err), r.err)
	require.Equal(t, 1, f.count("/v1/chat/completions"), "no retry after content was yielded")
}

func TestKeepAliveCommentsAreTolerated(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		for range 400 {
			s.w.Write([]byte(": OPENROUTER PROCESSING\n\n"))
		}
		s.w.(http.Flusher).Flush()
		chatOK(w, r)
	})
	r := collect(context.Background(), f.provider(func(o *Options) { o.APIMode = ModeChat }), userReq("gpt-4o", "hi"))
	require.NoError(t, r.err)
	require.Equal(t, "Hello world", r.content)
}

func TestFallbackOn404IsCachedPerModel(t *testing.T) {
	f := newFakeAPI(t) // /v1/responses is not handled: 404 Invalid URL
	f.handle("/v1/chat/completions", chatOK)
	p := f.provider(nil)
	for i := range 2 {
		r := collect(context.Background(), p, userReq("qwen-max", "hi"))
		require.NoError(t, r.err)
		require.Equal(t, "Hello world", r.content, "request ", i)
	}
	require.Equal(t, 1, f.count("/v1/responses"), "the second request goes straight to chat")
	require.Equal(t, 2, f.count("/v1/chat/completions"))
	require.True(t, p.UsesChat("qwen-max"), "model cached as chat-only")
	require.True(t, !p.UsesChat("other-model"), "cache is per model")

	// The cache is safe for concurrent use.
	done := make(chan error, 4)
	for range 4 {
		go func() { done <- collect(context.Background(), p, userReq("qwen-max", "hi")).err }()
	}
	for range 4 {
		require.NoError(t, <-done)
	}
	require.Equal(t, 1, f.count("/v1/responses"))
}

func TestFallbackOnUnsupportedParameterIsOneShot(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/responses", func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, 400, `{"error":{"message":"Unsupported parameter: 'reasoning.effort' is not supported with this model.","type":"invalid_request_error","param":"reasoning.effort","code":"unsupported_parameter"}}`)
	})
	f.handle("/v1/chat/completions", chatOK)
	p := f.provider(nil)
	for range 2 {
		r := collect(context.Background(), p, userReq("gpt-4o", "hi"))
		require.NoError(t, r.err)
		require.Equal(t, "Hello world", r.content)
	}
	require.Equal(t, 2, f.count("/v1/responses"), "incompatible parameters fall back this time only")
	require.True(t, !p.UsesChat("gpt-4o"), "not cached")
}

func TestForcedResponsesModeNeverFallsBack(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	r := collect(context.Background(), f.provider(func(o *Options) { o.APIMode = ModeResponses }), userReq("gpt-5", "hi"))
	require.Equal(t, llm.KindUnsupported, llm.KindOf(r.err), r.err)
	require.Equal(t, 404, r.err.(*llm.Error).Status)
	require.Equal(t, 0, f.count("/v1/chat/completions"))
}

func TestStalledStreamTripsWatchdog(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.data(chatChunk(`{"content":"partial"}`, ""))
		<-r.Context().Done() // stall until the client gives up
	})
	p := f.provider(func(o *Options) { o.APIMode = ModeChat; o.StreamIdle = 150 * time.Millisecond })
	r := collect(context.Background(), p, userReq("gpt-4o", "hi"))
	require.Equal(t, "partial", r.content)
	require.True(t, errors.Is(r.err, llm.ErrStreamIdle), "want ErrStreamIdle, got", r.err)
	require.Equal(t, llm.KindNetwork, llm.KindOf(r.err))
}

func TestHeaderTimeoutIsRetriedThenReported(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	})
	p := f.provider(func(o *Options) { o.APIMode = ModeChat; o.Timeout = 50 * time.Millisecond; o.NetworkRetryMax = 1 })
	r := collect(context.Background(), p, userReq("gpt-4o", "hi"))
	require.True(t, errors.Is(r.err, ErrTimeout), "want ErrTimeout, got", r.err)
	require.Equal(t, llm.KindNetwork, llm.KindOf(r.err))
	require.Equal(t, 1, len(r.retries))
	require.Equal(t, 2, f.count("/v1/chat/completions"))
}

func TestInterruptMidStream(t *testing.T) {
	for _, mode := range []string{ModeChat, ModeResponses} {
		t.Run(mode, func(t *testing.T) {
			f := newFakeAPI(t)
			stalled := func(w http.ResponseWriter, r *http.Request) {
				s := startSSE(w)
				if mode == ModeChat {
					s.data(chatChunk(`{"content":"tick"}`, ""))
				} else {
					s.event(`{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"tick"}`)
				}
				<-r.Context().Done()
			}
			f.handle("/v1/chat/completions", stalled)
			f.handle("/v1/responses", stalled)
			// The idle watchdog is far away: only the cancel can end this stream.
			p := f.provider(func(o *Options) { o.APIMode = mode; o.StreamIdle = time.Hour })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got string
			var err error
			for ch, e := range p.Stream(ctx, userReq("gpt-4o", "hi")) {
				if e != nil {
					err = e
					break
				}
				got += ch.Content
				cancel() // the user presses stop after the first delta
			}
			require.Equal(t, "tick", got)
			require.True(t, errors.Is(err, context.Canceled), "want context.Canceled, got", err)
			require.Equal(t, context.Canceled, err, "the iterator yields ctx.Err() itself")
		})
	}
}

func TestNetworkRetryAfterDroppedConnection(t *testing.T) {
	f := newFakeAPI(t)
	var calls atomic.Int32
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // the server drops the connection: EOF before any byte
			}
			return
		}
		chatOK(w, r)
	})
	p := f.provider(func(o *Options) { o.APIMode = ModeChat; o.NetworkRetryBase = 5 * time.Millisecond })
	r := collect(context.Background(), p, userReq("gpt-4o", "hi"))
	require.NoError(t, r.err)
	require.Equal(t, "Hello world", r.content)
	require.Equal(t, 1, len(r.retries))
	require.Equal(t, 1, r.retries[0].Attempt)
	require.Equal(t, 2, r.retries[0].Max)
	require.Equal(t, int64(5), r.retries[0].WaitMS)
	require.True(t, r.retries[0].Reason != "", "a retry says why")
	require.True(t, r.chunks[0].Retry != nil && r.chunks[0].Content == "", "the Retry chunk comes first and carries nothing else")
	require.Equal(t, int32(2), calls.Load())
}

func TestEmptyStreamIsRetried(t *testing.T) {
	f := newFakeAPI(t)
	var calls atomic.Int32
	f.handle("/v1/responses", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		if calls.Add(1) == 1 {
			s.event(`{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","created_at":1,"status":"in_progress","model":"gpt-5","output":[]}}`)
			return // the connection ends before any content
		}
		s.event(`{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"ok"}`)
		s.event(`{"type":"response.completed","response":{"id":"r","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[]}}`)
	})
	r := collect(context.Background(), f.provider(nil), userReq("gpt-5", "hi"))
	require.NoError(t, r.err)
	require.Equal(t, "ok", r.content)
	require.Equal(t, "stop", r.final.FinishReason)
	require.Equal(t, 1, len(r.retries))
	require.Equal(t, 0, f.count("/v1/chat/completions"))
}

func TestNetworkRetryGivesUp(t *testing.T) {
	f := newFakeAPI(t)
	url := f.srv.URL + "/v1"
	f.srv.Close() // connection refused from now on
	p := New(Options{BaseURL: url, APIKey: func(context.Context) (string, error) { return testKey, nil },
		APIMode: ModeChat, NetworkRetryMax: 2, NetworkRetryBase: time.Millisecond})
	defer p.CloseIdleConnections()
	r := collect(context.Background(), p, userReq("gpt-4o", "hi"))
	require.Equal(t, llm.KindNetwork, llm.KindOf(r.err), r.err)
	require.Equal(t, 2, len(r.retries))
	require.Equal(t, []int64{1, 2}, []int64{r.retries[0].WaitMS, r.retries[1].WaitMS}, "exponential backoff")
}

func TestBackoffStopsOnCancel(t *testing.T) {
	f := newFakeAPI(t)
	url := f.srv.URL + "/v1"
	f.srv.Close()
	p := New(Options{BaseURL: url, APIKey: func(context.Context) (string, error) { return testKey, nil },
		APIMode: ModeChat, NetworkRetryMax: 2, NetworkRetryBase: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for ch, e := range p.Stream(ctx, userReq("gpt-4o", "hi")) {
		if e != nil {
			err = e
			break
		}
		if ch.Retry != nil {
			cancel() // an hour of backoff: only the cancel ends it
		}
	}
	require.Equal(t, context.Canceled, err)
}
