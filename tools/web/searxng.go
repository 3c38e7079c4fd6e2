package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// SearXNG searches through a SearXNG instance's JSON API
// (GET {BaseURL}/search?q=…&format=json). The instance must have the json
// format enabled in its settings.
type SearXNG struct {
	BaseURL    string       // e.g. "http://127.0.0.1:8888"
	HTTPClient *http.Client // nil: a client through SOCKS5_PROXY when set, else http.DefaultClient
}

var _ SearchBackend = (*SearXNG)(nil)

type searxngAnswer struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
}

// Search implements SearchBackend.
func (s *SearXNG) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	if s.BaseURL == "" {
		return nil, fmt.Errorf("%w: searxng: no base URL", ErrSearch)
	}
	q := url.Values{"q": {query}, "format": {"json"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL(s.BaseURL, "")+"/search?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: searxng: %w", ErrSearch, err)
	}
	body, err := getJSON(s.HTTPClient, req, "searxng")
	if err != nil {
		return nil, err
	}
	var ans searxngAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("%w: searxng: decode: %w", ErrSearch, err)
	}
	out := make([]SearchResult, 0, min(n, len(ans.Results)))
	for _, r := range ans.Results {
		if len(out) == n {
			break
		}
		if r.URL == "" {
			continue
		}
		out = append(out, SearchResult{Title: plainText(r.Title), URL: r.URL, Snippet: plainText(r.Content)})
	}
	return out, nil
}
