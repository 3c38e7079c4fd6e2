package ipc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

func TestSearchBackendConfiguredByTheShell(t *testing.T) {
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"results": []any{map[string]any{"title": "Result for " + r.URL.Query().Get("q"), "url": "https://example.org", "content": "snippet"}}})
	}))
	defer searx.Close()
	search := scripted.Response{ToolCalls: []llm.ToolCall{{ID: "s1", Name: "web_search", Arguments: `{"query":"zqagent"}`}}}
	p := scripted.New(search, scripted.Response{Text: "no backend"}, search, scripted.Response{Text: "found"})
	ts := startServer(t, withProvider(p))
	c := ts.dial(t)
	sid := ts.session(t, c, map[string]any{"mode": "auto", "vcs": "off"})
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	started := 0
	searchResult := func() string {
		_, err := c.StartTurn(tctx(t), sid, "search")
		require.NoError(t, err)
		out := ""
		for _, ev := range collectTurn(t, c, sid) {
			switch ev.Type {
			case "tool_started":
				started++
			case "tool_finished":
				var d struct{ Status, Result_preview string }
				require.NoError(t, json.Unmarshal(ev.Data, &d))
				out = d.Status + ": " + d.Result_preview
			}
		}
		return out
	}
	offered := func(req llm.Request) bool {
		for _, ts := range req.Tools {
			if ts.Function.Name == "web_search" {
				return true
			}
		}
		return false
	}

	var cfg protocol.SearchConfig
	require.NoError(t, c.Call(tctx(t), "search.get", map[string]any{}, &cfg))
	require.Equal(t, backend.SearchNone, cfg.Kind)
	// No backend: web_search is not offered, and the model calling it by
	// name gets an error result; the tool never runs.
	got := searchResult()
	require.Contains(t, got, "error: ")
	require.Contains(t, got, "tool_disabled")
	require.Zero(t, started, "a disabled tool never starts")
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	require.NotEmpty(t, reqs[0].Tools)
	require.False(t, offered(reqs[0]), "web_search is not offered without a search backend")

	ce := callErr(t, c, "search.set", map[string]any{"kind": "searxng"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "baseUrl")
	ce = callErr(t, c, "search.set", map[string]any{"kind": "bing"})
	require.Contains(t, ce.Message, "kind")
	require.NoError(t, c.Call(tctx(t), "search.set", map[string]any{"kind": "searxng", "baseUrl": searx.URL}, &cfg))
	require.Equal(t, backend.SearchSearXNG, cfg.Kind)

	got = searchResult()
	require.Contains(t, got, "ok: ")
	require.Contains(t, got, "Result for zqagent", fmt.Sprint("the running session used the new backend: ", got))
	require.Equal(t, 1, started)
	require.True(t, offered(p.Requests()[2]), "search.set offers web_search on the next model request")
}
