package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

func fakeSearXNG(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "bad request "+r.URL.String(), http.StatusBadRequest)
			return
		}
		q := r.URL.Query().Get("q")
		var res []map[string]string
		for i := range 8 {
			res = append(res, map[string]string{
				"title":   fmt.Sprintf("Result %d for %s", i, q),
				"url":     fmt.Sprintf("https://example.com/%d", i),
				"content": fmt.Sprintf("snippet <b>%d</b> &amp; more", i),
			})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"query": q, "results": res})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSearXNG(t *testing.T) {
	srv := fakeSearXNG(t)
	res, err := (&SearXNG{BaseURL: srv.URL + "/"}).Search(context.Background(), "go generics", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("got %d results, want 3", len(res))
	}
	want := SearchResult{Title: "Result 0 for go generics", URL: "https://example.com/0", Snippet: "snippet 0 & more"}
	if res[0] != want {
		t.Errorf("res[0] = %+v, want %+v", res[0], want)
	}
}

func fakeBrave(t *testing.T, key string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("X-Subscription-Token") != key {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		var results []map[string]string
		n := 0
		fmt.Sscanf(r.URL.Query().Get("count"), "%d", &n)
		for i := range n {
			results = append(results, map[string]string{
				"title":       fmt.Sprintf("<strong>Brave</strong> %d", i),
				"url":         fmt.Sprintf("https://brave.example/%d?q=%s", i, r.URL.Query().Get("q")),
				"description": "a <strong>highlighted</strong> snippet",
			})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"type": "search", "web": map[string]any{"results": results}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBrave(t *testing.T) {
	srv := fakeBrave(t, "k-123")
	b := &Brave{APIKey: func() string { return "k-123" }, BaseURL: srv.URL}
	res, err := b.Search(context.Background(), "rust", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchResult{
		{Title: "Brave 0", URL: "https://brave.example/0?q=rust", Snippet: "a highlighted snippet"},
		{Title: "Brave 1", URL: "https://brave.example/1?q=rust", Snippet: "a highlighted snippet"},
	}
	if len(res) != len(want) || res[0] != want[0] || res[1] != want[1] {
		t.Fatalf("results = %+v, want %+v", res, want)
	}

	_, err = (&Brave{APIKey: func() string { return "wrong" }, BaseURL: srv.URL}).Search(context.Background(), "rust", 2)
	if !errors.Is(err, ErrSearch) || !strings.Contains(err.Error(), "401") {
		t.Errorf("bad key: err = %v", err)
	}
	if strings.Contains(fmt.Sprint(err), "wrong") {
		t.Errorf("the API key leaked into the error: %v", err)
	}

	_, err = (&Brave{BaseURL: srv.URL}).Search(context.Background(), "rust", 2)
	if !errors.Is(err, tools.ErrUnavailable) {
		t.Errorf("no key: err = %v, want ErrUnavailable", err)
	}
}

func TestWebSearchTool(t *testing.T) {
	srv := fakeSearXNG(t)
	reg := tools.NewRegistry()
	RegisterWebTools(reg, Options{Search: &SearXNG{BaseURL: srv.URL}})
	out, err := callTool(t, reg, "web_search", map[string]any{"query": "  sqlite wal  ", "max_results": 2})
	if err != nil {
		t.Fatal(err)
	}
	so, ok := out.(searchOutput)
	if !ok {
		t.Fatalf("result is %T", out)
	}
	if so.Query != "sqlite wal" || len(so.Results) != 2 || so.Results[1].URL != "https://example.com/1" {
		t.Errorf("result = %+v", so)
	}
	out, err = callTool(t, reg, "web_search", map[string]any{"query": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.(searchOutput).Results); n != DefaultSearchResults {
		t.Errorf("default result count = %d, want %d", n, DefaultSearchResults)
	}
	_, err = callTool(t, reg, "web_search", map[string]any{"query": " "})
	wantErrType(t, err, "invalid_arguments")
}

// switchable is a backend the test switches on and off.
type switchable struct {
	SearchBackend
	on bool
}

func (s *switchable) Configured() bool { return s.on }

func offered(reg *tools.Registry, name string) bool {
	for _, s := range reg.Schemas() {
		if s.Function.Name == name {
			return true
		}
	}
	return false
}

func TestWebSearchOfferedOnlyWithABackend(t *testing.T) {
	reg := tools.NewRegistry()
	RegisterWebTools(reg, Options{})
	if offered(reg, "web_search") || !offered(reg, "web_fetch") {
		t.Fatal("without a backend web_search is hidden, web_fetch is not")
	}
	if spec, _ := reg.Lookup("web_search"); spec.Enabled() {
		t.Error("web_search without a backend is not enabled")
	}
	b := &switchable{SearchBackend: &SearXNG{BaseURL: "http://127.0.0.1:1"}}
	reg = tools.NewRegistry()
	RegisterWebTools(reg, Options{Search: b})
	if offered(reg, "web_search") {
		t.Error("a backend that is not configured hides web_search")
	}
	b.on = true
	if !offered(reg, "web_search") {
		t.Error("configuring the backend offers web_search on the next request")
	}
}

func TestWebSearchNoBackend(t *testing.T) {
	reg := tools.NewRegistry()
	RegisterWebTools(reg, Options{})
	_, err := callTool(t, reg, "web_search", map[string]any{"query": "anything"})
	wantErrType(t, err, "unavailable")
	if !errors.Is(err, tools.ErrUnavailable) || !strings.Contains(err.Error(), "no search backend is configured") {
		t.Errorf("err = %v", err)
	}
}

func TestWebSearchBackendError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("not json"))
	}))
	defer srv.Close()
	reg := tools.NewRegistry()
	RegisterWebTools(reg, Options{Search: &SearXNG{BaseURL: srv.URL}})
	_, err := callTool(t, reg, "web_search", map[string]any{"query": "q"})
	wantErrType(t, err, "search_error")
	if !errors.Is(err, ErrSearch) {
		t.Errorf("err = %v", err)
	}
}
