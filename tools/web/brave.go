package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/zqagent/sidecar/tools"
)

// DefaultBraveURL is the Brave Search API endpoint.
const DefaultBraveURL = "https://api.search.brave.com"

// Brave searches through the Brave Search API
// (GET {BaseURL}/res/v1/web/search, header X-Subscription-Token).
type Brave struct {
	// APIKey returns the key at call time (read from the keychain), so a key
	// set or removed while the sidecar runs takes effect at once.
	APIKey     func() string
	BaseURL    string       // "" means DefaultBraveURL
	HTTPClient *http.Client // nil: a client through SOCKS5_PROXY when set, else http.DefaultClient
}

var _ SearchBackend = (*Brave)(nil)

type braveAnswer struct {
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements SearchBackend.
func (b *Brave) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	key := ""
	if b.APIKey != nil {
		key = b.APIKey()
	}
	if key == "" {
		return nil, fmt.Errorf("%w: brave search has no API key configured", tools.ErrUnavailable)
	}
	q := url.Values{"q": {query}, "count": {strconv.Itoa(min(max(n, 1), MaxSearchResults))}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL(b.BaseURL, DefaultBraveURL)+"/res/v1/web/search?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: brave: %w", ErrSearch, err)
	}
	req.Header.Set("X-Subscription-Token", key)
	body, err := getJSON(b.HTTPClient, req, "brave")
	if err != nil {
		return nil, err
	}
	var ans braveAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("%w: brave: decode: %w", ErrSearch, err)
	}
	out := make([]SearchResult, 0, min(n, len(ans.Web.Results)))
	for _, r := range ans.Web.Results {
		if len(out) == n {
			break
		}
		if r.URL == "" {
			continue
		}
		out = append(out, SearchResult{Title: plainText(r.Title), URL: r.URL, Snippet: plainText(r.Description)})
	}
	return out, nil
}
