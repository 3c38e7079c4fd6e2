package openai

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

func TestDeepSeekQuirks(t *testing.T) {
	tools := []llm.ToolSchema{
		{Type: "function", Function: llm.FunctionSchema{Name: "read_file", Parameters: []byte(`{"type":"object"}`)}},
		{Type: "function", Function: llm.FunctionSchema{Name: "web_search", Parameters: []byte(`{"type":"object"}`)}},
	}
	t.Run("chat skips reasoning effort", func(t *testing.T) {
		f := newFakeAPI(t)
		f.handle("/v1/chat/completions", chatOK)
		req := userReq("deepseek-reasoner", "hi")
		req.ReasoningEffort = "high"
		req.Tools = tools
		require.NoError(t, collect(context.Background(), f.provider(func(o *Options) { o.APIMode = ModeChat }), req).err)
		body := f.last("/v1/chat/completions").Body
		_, has := body["reasoning_effort"]
		require.True(t, !has, "DeepSeek gets no reasoning_effort: ", f.last("/v1/chat/completions").Raw)
		require.Equal(t, 2, len(body["tools"].([]any)), "chat keeps the local web_search tool")
	})
	t.Run("base URL names deepseek", func(t *testing.T) {
		f := newFakeAPI(t)
		f.handle("/deepseek/v1/chat/completions", chatOK)
		req := userReq("some-model", "hi")
		req.ReasoningEffort = "low"
		p := f.provider(func(o *Options) { o.APIMode = ModeChat; o.BaseURL = f.srv.URL + "/deepseek/v1" })
		require.NoError(t, collect(context.Background(), p, req).err)
		_, has := f.last("/deepseek/v1/chat/completions").Body["reasoning_effort"]
		require.True(t, !has, "no reasoning_effort for a DeepSeek base URL")
	})
	t.Run("responses injects builtin web_search", func(t *testing.T) {
		f := newFakeAPI(t)
		f.handle("/v1/responses", responsesStream(true))
		req := userReq("deepseek-chat", "hi")
		req.ReasoningEffort = "high"
		req.Tools = tools
		require.NoError(t, collect(context.Background(), f.provider(nil), req).err)
		body := f.last("/v1/responses").Body
		_, has := body["reasoning"]
		require.True(t, !has, "no reasoning block for DeepSeek")
		require.Equal(t, []any{
			map[string]any{"type": "function", "name": "read_file", "parameters": map[string]any{"type": "object"}},
			map[string]any{"type": "web_search"},
		}, body["tools"])
	})
	t.Run("others keep the effort", func(t *testing.T) {
		f := newFakeAPI(t)
		f.handle("/v1/chat/completions", chatOK)
		req := userReq("gpt-5", "hi")
		req.ReasoningEffort = "low"
		require.NoError(t, collect(context.Background(), f.provider(func(o *Options) { o.APIMode = ModeChat }), req).err)
		require.Equal(t, "low", f.last("/v1/chat/completions").Body["reasoning_effort"])
	})
}

func TestAPIKeyIsReadAtEachRequest(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	var key atomic.Value
	key.Store("sk-first-key-aaaaaaaa")
	p := f.provider(func(o *Options) {
		o.APIMode = ModeChat
		o.APIKey = func(context.Context) (string, error) { return key.Load().(string), nil }
	})
	require.NoError(t, collect(context.Background(), p, userReq("gpt-4o", "one")).err)
	key.Store("sk-second-key-bbbbbbb") // changed in the UI
	require.NoError(t, collect(context.Background(), p, userReq("gpt-4o", "two")).err)
	reqs := f.all()
	require.Equal(t, 2, len(reqs))
	require.Equal(t, "Bearer sk-first-key-aaaaaaaa", reqs[0].Header.Get("Authorization"))
	require.Equal(t, "Bearer sk-second-key-bbbbbbb", reqs[1].Header.Get("Authorization"))
}

func TestEnvKeyAndHeaders(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	t.Setenv("OPENAI_API_KEY", "sk-from-env-cccccccc")
	p := New(Options{BaseURL: f.srv.URL + "/v1", APIMode: ModeChat, Headers: map[string]string{"X-Title": "zqagent"}})
	defer p.CloseIdleConnections()
	require.NoError(t, collect(context.Background(), p, userReq("gpt-4o", "hi")).err)
	h := f.last("/v1/chat/completions").Header
	require.Equal(t, "Bearer sk-from-env-cccccccc", h.Get("Authorization"))
	require.Equal(t, "zqagent", h.Get("X-Title"))
}

func TestConfigErrors(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	noKey := f.provider(func(o *Options) { o.APIKey = func(context.Context) (string, error) { return " ", nil } })
	r := collect(context.Background(), noKey, userReq("gpt-4o", "hi"))
	require.True(t, errors.Is(r.err, llm.ErrNoAPIKey), r.err)
	require.Equal(t, llm.KindConfig, llm.KindOf(r.err))
	require.True(t, strings.Contains(r.err.Error(), "OPENAI_API_KEY") && strings.Contains(r.err.Error(), "keys.set"), r.err)
	_, err := noKey.Chat(context.Background(), llm.ChatRequest{Model: "gpt-4o"})
	require.True(t, errors.Is(err, llm.ErrNoAPIKey), err)

	r = collect(context.Background(), f.provider(nil), userReq("", "hi"))
	require.True(t, errors.Is(r.err, llm.ErrNoModel), r.err)
	require.Equal(t, llm.KindConfig, llm.KindOf(r.err))

	keyErr := f.provider(func(o *Options) {
		o.APIKey = func(context.Context) (string, error) { return "", errors.New("keychain locked") }
	})
	r = collect(context.Background(), keyErr, userReq("gpt-4o", "hi"))
	require.True(t, errors.Is(r.err, llm.ErrNoAPIKey) && strings.Contains(r.err.Error(), "keychain locked"), r.err)

	for _, o := range []Options{{BaseURL: "ftp://x"}, {BaseURL: "http://x", Proxy: "http://not-socks:1"}} {
		r = collect(context.Background(), New(o), userReq("gpt-4o", "hi"))
		require.Equal(t, llm.KindConfig, llm.KindOf(r.err), r.err)
	}
	require.Equal(t, 0, len(f.all()), "no request leaves without a key, a model and a valid configuration")
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_BASE_URL": "https://api.deepseek.com/v1", "SOCKS5_PROXY": "socks5://127.0.0.1:1080",
		"OPENAI_FORCE_API_MODE": "chat", "OPENAI_TIMEOUT_MS": "5000", "OPENAI_STREAM_IDLE_MS": "9000",
		"OPENAI_MAX_RETRIES": "0", "NETWORK_RETRY_MAX": "5", "NETWORK_RETRY_BASE_MS": "100",
	}
	o := fromLookup(func(k string) string { return env[k] })
	require.Equal(t, Options{BaseURL: "https://api.deepseek.com/v1", Proxy: "socks5://127.0.0.1:1080", APIMode: ModeChat,
		Timeout: 5 * time.Second, StreamIdle: 9 * time.Second, MaxRetries: 0, NetworkRetryMax: 5,
		NetworkRetryBase: 100 * time.Millisecond}, o)

	d := fromLookup(func(string) string { return "" }).withDefaults(func(string) string { return "" })
	require.Equal(t, DefaultBaseURL, d.BaseURL)
	require.Equal(t, ModeAuto, d.APIMode)
	require.Equal(t, DefaultStreamIdle, d.StreamIdle)
	require.Equal(t, DefaultMaxRetries, d.MaxRetries)
	require.Equal(t, DefaultNetworkRetryMax, d.NetworkRetryMax)
	require.Equal(t, DefaultNetworkRetryBase, d.NetworkRetryBase)

	p := New(Options{Proxy: "socks5://127.0.0.1:1080"})
	require.NoError(t, p.clientErr, "a SOCKS5 proxy URL is accepted")
}

func TestAuditLogRedactsKey(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.data(chatChunk(`{"content":"echo `+testKey+`"}`, ""))
		s.data(chatChunk(`{}`, "stop"))
		s.data("[DONE]")
	})
	dir := t.TempDir()
	p := f.provider(func(o *Options) {
		o.APIMode = ModeChat
		o.LogDir = dir
		o.Headers = map[string]string{"X-Api-Key": testKey, "X-Title": "zq"}
	})
	req := userReq("gpt-4o", "my key is "+testKey)
	req.ReqID = "turn-7/iter-1"
	req.Messages[1].Attachments = []llm.Attachment{{Name: "a.png", MimeType: "image/png", DataURL: "data:image/png;base64," + strings.Repeat("QUFB", 100)}}
	r := collect(context.Background(), p, req)
	require.NoError(t, r.err)
	_, err := p.Chat(context.Background(), llm.ChatRequest{Model: "gpt-4o", ReqID: "name-1", Messages: req.Messages})
	require.True(t, err != nil, "the chat handler streams, so the non-streamed decode fails; it is still logged")

	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		require.True(t, !strings.Contains(string(b), testKey), "key leaked into ", path)
		require.True(t, !strings.Contains(string(b), "QUFBQUFB"), "inline media are shortened")
		return nil
	})
	require.NoError(t, err)
	day := time.Now().UTC().Format("2006-01-02")
	require.Equal(t, []string{filepath.Join(dir, day, "name-1.json"), filepath.Join(dir, day, "turn-7_iter-1.json")}, files)
	b, err := os.ReadFile(files[1])
	require.NoError(t, err)
	for _, want := range []string{`"model": "gpt-4o"`, `"api": "chat"`, `"finishReason": "stop"`, `"Authorization": "Bearer [redacted]"`, `"X-Title": "zq"`, `"content": "echo [redacted]"`, `<400 base64 chars>`} {
		require.True(t, strings.Contains(string(b), want), "audit lacks ", want, "\n", string(b))
	}
}
