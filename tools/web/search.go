package web

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/zqagent/sidecar/netproxy"
	"github.com/zqagent/sidecar/tools"
)

//go:embed web_search.md
var webSearchDescription string

// Result counts of web_search.
const (
	DefaultSearchResults = 5
	MaxSearchResults     = 20
)

// SearchResult is one hit of a web search.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// SearchBackend runs a web search. Implementations return at most n results
// and must stop when ctx ends.
type SearchBackend interface {
	Search(ctx context.Context, query string, n int) ([]SearchResult, error)
}

// SwitchableBackend is a SearchBackend that may be configured or not at run
// time (the sidecar's search.set): web_search is offered to the model only
// while Configured reports true. Configured is asked before every model
// request, so it must be fast.
type SwitchableBackend interface {
	SearchBackend
	Configured() bool
}

type searcher struct {
	backend SearchBackend
	timeout time.Duration
}

type searchArgs struct {
	Query      string `json:"query" jsonschema:"required" jsonschema_description:"The search query."`
	MaxResults int    `json:"max_results" jsonschema:"minimum=1,maximum=20" jsonschema_description:"Number of results to return (default 5, at most 20)."`
}

// searchOutput is what web_search returns to the model.
type searchOutput struct {
	Query   string         `json:"query"`
	Results []SearchResult `json:"results"`
}

// available reports whether web_search can be offered: a backend is set
// and, when it can be switched off, is configured.
func (s *searcher) available() bool {
	if s.backend == nil {
		return false
	}
	if b, ok := s.backend.(SwitchableBackend); ok {
		return b.Configured()
	}
	return true
}

func (s *searcher) handle(ctx context.Context, call tools.Call) (any, error) {
	var a searchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return nil, fmt.Errorf("%w: query is required", tools.ErrInvalidArgs)
	}
	if s.backend == nil {
		return nil, tools.Errorf("unavailable", "%w: no search backend is configured; web_search cannot be used here (web_fetch may still work with a known URL)", tools.ErrUnavailable)
	}
	n := a.MaxResults
	if n <= 0 {
		n = DefaultSearchResults
	}
	n = min(n, MaxSearchResults)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := s.backend.Search(ctx, q, n)
	if err != nil {
		if errors.Is(err, tools.ErrUnavailable) {
			return nil, tools.Errorf("unavailable", "%w", err)
		}
		return nil, tools.Errorf("search_error", "%w", err)
	}
	if len(res) > n {
		res = res[:n]
	}
	if res == nil {
		res = []SearchResult{}
	}
	return searchOutput{Query: q, Results: res}, nil
}

// maxSearchBody caps a backend's JSON answer.
const maxSearchBody = 4 << 20

// getJSON sends req and returns the body of a 2xx answer.
func getJSON(client *http.Client, req *http.Request, backend string) ([]byte, error) {
	if client == nil {
		c, err := netproxy.EnvClient() // SOCKS5_PROXY applies to web_search too
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSearch, backend, err)
		}
		client = cmp.Or(c, http.DefaultClient)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSearch, backend, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: read: %w", ErrSearch, backend, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt := strings.ToValidUTF8(string(body[:min(len(body), 200)]), "")
		return nil, fmt.Errorf("%w: %s answered %s: %s", ErrSearch, backend, resp.Status, strings.TrimSpace(excerpt))
	}
	return body, nil
}

func baseURL(s, def string) string {
	if s == "" {
		s = def
	}
	return strings.TrimRight(s, "/")
}
