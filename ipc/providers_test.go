package ipc

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/protocol"
)

// fakeOpenAI is a real HTTP server speaking OpenAI's Chat Completions stream
// and /models; it records what each request carried.
type fakeOpenAI struct {
	srv *httptest.Server

	mu      sync.Mutex
	auth    []string         // Authorization of each chat request
	headers []http.Header    // headers of each chat request
	bodies  []map[string]any // chat request bodies
	models  int              // /models requests
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

// baseURL is the profile base URL of the fake.
func (f *fakeOpenAI) baseURL() string { return f.srv.URL + "/v1" }

func (f *fakeOpenAI) handle(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/models"):
		f.mu.Lock()
		f.models++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m-large","object":"model"},{"id":"m-small","object":"model"}]}`)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.headers = append(f.headers, r.Header.Clone())
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		if body["stream"] != true { // naming and other non-streamed calls
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c0","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"A title"},"finish_reason":"stop"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{`{"role":"assistant","content":"hi from "}`, `{"content":"fake"}`} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", d)
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeOpenAI) lastAuth() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auth) == 0 {
		return ""
	}
	return f.auth[len(f.auth)-1]
}

// streamed returns the streamed chat requests (model turns) so far.
func (f *fakeOpenAI) streamed() (bodies []map[string]any, headers []http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, b := range f.bodies {
		if b["stream"] == true {
			bodies, headers = append(bodies, b), append(headers, f.headers[i])
		}
	}
	return bodies, headers
}

// namingBodies returns the non-streamed chat requests (session naming).
func (f *fakeOpenAI) namingBodies() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.bodies {
		if b["stream"] != true {
			out = append(out, b)
		}
	}
	return out
}

func (f *fakeOpenAI) modelRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.models
}

// systemPrompt returns the system message of a chat request body.
func systemPrompt(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] == "system" {
			s, _ := mm["content"].(string)
			return s
		}
	}
	return ""
}

// withModelProviders makes the server choose providers from profiles (no
// fixed provider).
func withModelProviders() serverOpt { return func(o *Options) { o.Provider = nil } }

func withKeyring(kr *keychain.Keyring) serverOpt { return func(o *Options) { o.Keyring = kr } }

type providerList struct {
	Providers []protocol.Provider `json:"providers"`
}

func providerNamed(t *testing.T, c *client.Client, name string) (protocol.Provider, bool) {
	t.Helper()
	var l providerList
	require.NoError(t, c.Call(tctx(t), "providers.list", nil, &l))
	for _, p := range l.Providers {
		if p.Name == name {
			return p, true
		}
	}
	return protocol.Provider{}, false
}

func TestProvidersListHasImplicitDefault(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("OPENAI_MODEL", "env-model")
	t.Setenv("OPENAI_API_KEY", "sk-env-only-abcdef")
	ts := startServer(t)
	c := ts.dial(t)
	p, ok := providerNamed(t, c, "openai")
	require.True(t, ok)
	require.True(t, p.Implicit)
	require.Equal(t, "http://127.0.0.1:9/v1", p.BaseURL)
	require.Equal(t, "env-model", p.DefaultModel)
	require.True(t, p.KeyConfigured)
	require.Equal(t, "env", p.KeySource)
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "sk-env-only", "a key is never returned")

	// Storing the default profile keeps the environment's values for what
	// is not given.
	var set protocol.Provider
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "openai", "contextWindow": 64000}, &set))
	require.False(t, set.Implicit)
	require.Equal(t, "http://127.0.0.1:9/v1", set.BaseURL)
	require.Equal(t, 64000, set.ContextWindow)
	// Deleting it brings the implicit one back.
	require.NoError(t, c.Call(tctx(t), "providers.delete", map[string]any{"name": "openai"}, nil))
	p, ok = providerNamed(t, c, "openai")
	require.True(t, ok)
	require.True(t, p.Implicit)
}

func TestProvidersSetValidates(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	cases := []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"baseUrl": "http://x"}, "name"},
		{map[string]any{"name": "local"}, "baseUrl"},
		{map[string]any{"name": "local", "baseUrl": "ftp://x/v1"}, "baseUrl"},
		{map[string]any{"name": "local", "baseUrl": "http://user:pw@x/v1"}, "baseUrl"},
		{map[string]any{"name": "local", "baseUrl": "http://x/v1", "apiMode": "magic"}, "apiMode"},
		{map[string]any{"name": "local", "baseUrl": "http://x/v1", "proxy": "http://proxy:1"}, "proxy"},
		{map[string]any{"name": "local", "baseUrl": "http://x/v1", "proxy": "socks5://u:secret@proxy:1"}, "proxy"},
		{map[string]any{"name": "local", "baseUrl": "http://x/v1", "contextWindow": -1}, "contextWindow"},
		{map[string]any{"name": "bad name\n", "baseUrl": "http://x/v1"}, "name"},
	}
	for _, tc := range cases {
		ce := callErr(t, c, "providers.set", tc.params)
		require.Equal(t, wsrpc.CodeInvalidParams, ce.Code, "%v", tc.params)
		require.Contains(t, ce.Message, tc.field, "%v", tc.params)
		require.NotContains(t, ce.Message, "secret")
	}
	// A credential header is refused: keys belong in the keychain.
	ce := callErr(t, c, "providers.set", map[string]any{"name": "local", "baseUrl": "http://x/v1", "headers": map[string]string{"Authorization": "Bearer sk-nope-123456"}})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.NotContains(t, ce.Message, "sk-nope")
	_, ok := providerNamed(t, c, "local")
	require.False(t, ok, "nothing was stored")
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "providers.delete", map[string]any{"name": "local"}).Code)
}

func TestProviderProfileDrivesSessionAndModels(t *testing.T) {
	f := newFakeOpenAI(t)
	t.Setenv("LOCAL_AI_API_KEY", "sk-local-env-key-0001") // keychain.EnvVar("local-ai")
	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	var set protocol.Provider
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{
		"name": "local-ai", "baseUrl": f.baseURL(), "apiMode": "chat", "defaultModel": "m-small",
		"headers": map[string]string{"X-Gateway": "gw-1"}, "contextWindow": 32000,
	}, &set))
	require.Equal(t, "local-ai", set.Name)
	require.True(t, set.KeyConfigured)
	require.Equal(t, "env", set.KeySource)
	require.Equal(t, map[string]string{"X-Gateway": "gw-1"}, set.Headers)

	// models.list asks the profile's endpoint once, then answers from the cache.
	var ml protocol.ModelsListResult
	require.NoError(t, c.Call(tctx(t), "models.list", map[string]any{"provider": "local-ai"}, &ml))
	require.Equal(t, []string{"m-large", "m-small"}, ml.Models)
	require.False(t, ml.Cached)
	require.NoError(t, c.Call(tctx(t), "models.list", map[string]any{"provider": "local-ai"}, &ml))
	require.True(t, ml.Cached)
	require.Equal(t, 1, f.modelRequests())
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "models.list", map[string]any{"provider": "nope"}).Code)

	// A session of the profile uses its endpoint, mode, headers, default
	// model and key.
	pid := ts.project(t, c)
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "session.create", map[string]any{"projectId": pid, "provider": "nope"}).Code)
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"provider": "local-ai"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Equal(t, "hi from fake", textOf(evs))
	bodies, headers := f.streamed()
	require.Len(t, bodies, 1)
	require.Equal(t, "m-small", bodies[0]["model"])
	require.Equal(t, "gw-1", headers[0].Get("X-Gateway"))
	require.Equal(t, "Bearer sk-local-env-key-0001", headers[0].Get("Authorization"))

	// A changed profile applies to the next turn and empties the cache.
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "local-ai", "defaultModel": "m-large", "headers": map[string]string{"X-Gateway": "gw-2"}}, nil))
	_, err = c.StartTurn(tctx(t), sid, "again")
	require.NoError(t, err)
	collectTurn(t, c, sid)
	bodies, headers = f.streamed()
	require.Len(t, bodies, 2)
	require.Equal(t, "m-large", bodies[1]["model"])
	require.Equal(t, "gw-2", headers[1].Get("X-Gateway"))
	require.NoError(t, c.Call(tctx(t), "models.list", map[string]any{"provider": "local-ai"}, &ml))
	require.False(t, ml.Cached)
	require.Equal(t, 2, f.modelRequests())

	// The compaction state is saved after each turn with the profile's
	// context window.
	state, err := ts.st.Compaction(tctx(t), sid)
	require.NoError(t, err)
	var cs struct {
		ContextWindow int `json:"contextWindow"`
	}
	require.NoError(t, json.Unmarshal(state, &cs))
	require.Equal(t, 32000, cs.ContextWindow)

	// A deleted profile makes the session's next turn fail as configuration.
	require.NoError(t, c.Call(tctx(t), "providers.delete", map[string]any{"name": "local-ai"}, nil))
	_, err = c.StartTurn(tctx(t), sid, "after delete")
	require.NoError(t, err)
	evs = collectTurn(t, c, sid)
	require.Equal(t, 1, countType(evs, "error"))
	require.Contains(t, string(evs[len(evs)-2].Data), "local-ai")
}

func TestModelsListWithoutKeyIsConfigError(t *testing.T) {
	f := newFakeOpenAI(t)
	t.Setenv("NOKEY_API_KEY", "")
	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "nokey", "baseUrl": f.baseURL()}, nil))
	ce := callErr(t, c, "models.list", map[string]any{"provider": "nokey"})
	require.Equal(t, wsrpc.CodeConfig, ce.Code)
	require.Equal(t, 0, f.modelRequests())
}

// A session on a real model (here a non-default profile's) is named after
// its first turn: session_named {source: auto} with the model's title.
func TestRealModelSessionIsNamedAutomatically(t *testing.T) {
	f := newFakeOpenAI(t)
	t.Setenv("NAMER_API_KEY", "sk-namer-env-key-0001")
	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "namer", "baseUrl": f.baseURL(), "apiMode": "chat", "defaultModel": "m-small"}, nil))
	sid, err := c.CreateSession(tctx(t), ts.project(t, c), map[string]any{"provider": "namer", "vcs": "off"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "please refactor the parser")
	require.NoError(t, err)
	collectTurn(t, c, sid)
	ev := nextOfType(t, c, sid, "session_named")
	require.JSONEq(t, `{"taskId":"","name":"A title","source":"auto"}`, string(ev.Data))
	var got struct {
		Session protocol.Session `json:"session"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	require.Equal(t, "A title", got.Session.Title)
	require.Equal(t, "auto", got.Session.TitleSource)
}
