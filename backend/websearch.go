package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/web"
)

// The web_search tool's backend is configured by the shell with search.set
// and kept in the store's settings (and in memory, searchCache). Every
// session's web_search reads it at call time (searchBackend), so a change
// applies to the next search without reloading engines; while none is set,
// web_search is not offered to the model at all. Brave's API key lives in the keychain like the model
// keys: keys.set {provider: "brave"}.

// searchSettingKey is the store setting holding the backend.
const searchSettingKey = "webSearch"

// Search backend kinds.
const (
	SearchNone    = "none"
	SearchSearXNG = "searxng"
	SearchBrave   = "brave"
)

// searchCache keeps the stored backend in memory: web_search's availability
// is asked before every model request of every session.
type searchCache struct {
	mu  sync.Mutex             // guards cfg; a leaf lock, held across the store read or write that fills it
	cfg *protocol.SearchConfig // nil until first read
}

// searchConfig returns the stored backend (kind none when unset).
func (b *Backend) searchConfig(ctx context.Context) (protocol.SearchConfig, error) {
	b.search.mu.Lock()
	defer b.search.mu.Unlock()
	if b.search.cfg != nil {
		return *b.search.cfg, nil
	}
	c, err := b.readSearchConfig(ctx)
	if err != nil {
		return protocol.SearchConfig{}, err
	}
	b.search.cfg = &c
	return c, nil
}

// readSearchConfig reads the backend from the store.
func (b *Backend) readSearchConfig(ctx context.Context) (protocol.SearchConfig, error) {
	raw, err := b.opts.Store.Setting(ctx, searchSettingKey)
	if errors.Is(err, store.ErrNotFound) {
		return protocol.SearchConfig{Kind: SearchNone}, nil
	}
	if err != nil {
		return protocol.SearchConfig{}, err
	}
	var c protocol.SearchConfig
	if err := json.Unmarshal(raw, &c); err != nil || c.Kind == "" {
		return protocol.SearchConfig{Kind: SearchNone}, nil
	}
	return c, nil
}

func (b *Backend) WebSearch(ctx context.Context, p protocol.Empty) (protocol.SearchConfig, error) {
	c, err := b.searchConfig(ctx)
	if err != nil {
		return protocol.SearchConfig{}, err
	}
	if c.Kind == SearchBrave {
		c.KeyConfigured = b.keyStatus(SearchBrave).Configured
	}
	return c, nil
}

func (b *Backend) SetWebSearch(ctx context.Context, p protocol.SearchSetParams) (protocol.SearchConfig, error) {
	c := protocol.SearchConfig{Kind: string(p.Kind), BaseURL: p.BaseURL}
	switch p.Kind {
	case SearchNone:
		c.BaseURL = ""
	case SearchSearXNG:
		if p.BaseURL == "" {
			return protocol.SearchConfig{}, protocol.InvalidField("baseUrl", "required for searxng")
		}
		fallthrough
	case SearchBrave:
		if p.BaseURL != "" {
			u, err := url.Parse(p.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return protocol.SearchConfig{}, protocol.InvalidField("baseUrl", "must be an http or https URL")
			}
		}
	default:
		return protocol.SearchConfig{}, protocol.InvalidField("kind", "must be none, searxng or brave")
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return protocol.SearchConfig{}, err
	}
	b.search.mu.Lock()
	err = b.opts.Store.SetSetting(ctx, searchSettingKey, raw)
	if err == nil {
		b.search.cfg = &c // the next model request of every session sees it
	}
	b.search.mu.Unlock()
	if err != nil {
		return protocol.SearchConfig{}, fmt.Errorf("save search backend: %w", err)
	}
	if c.Kind == SearchBrave {
		c.KeyConfigured = b.keyStatus(SearchBrave).Configured
	}
	return c, nil
}

// searchBackend is the web_search backend of every session: it resolves the
// configured backend at each search.
type searchBackend struct{ s *Backend }

var _ web.SwitchableBackend = searchBackend{}

// Configured reports whether a backend is set: web_search is offered to
// the model only then.
func (b searchBackend) Configured() bool {
	ctx, cancel := context.WithTimeout(b.s.ctx, 5*time.Second)
	defer cancel()
	c, err := b.s.searchConfig(ctx)
	if err != nil {
		b.s.log.Warn("read web search backend", "err", err)
		return false
	}
	return c.Kind != SearchNone
}

func (b searchBackend) Search(ctx context.Context, query string, n int) ([]web.SearchResult, error) {
	c, err := b.s.searchConfig(ctx)
	if err != nil {
		return nil, err
	}
	switch c.Kind {
	case SearchSearXNG:
		return (&web.SearXNG{BaseURL: c.BaseURL}).Search(ctx, query, n)
	case SearchBrave:
		key := b.s.providers.keyFunc(SearchBrave)
		return (&web.Brave{BaseURL: c.BaseURL, APIKey: func() string {
			k, _ := key(ctx)
			return k
		}}).Search(ctx, query, n)
	}
	return nil, tools.Errorf("unavailable", "%w: no web search backend is configured; the app can set one with search.set (SearXNG or Brave)", tools.ErrUnavailable)
}
