package backend

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/openai"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// ModelsCacheTTL is how long models.list reuses an endpoint's answer.
const ModelsCacheTTL = 60 * time.Second

// profileName is what a provider profile may be called (it is also the
// keychain account of its key).
var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// modelsTimeout bounds one models.list request to an endpoint.
const modelsTimeout = 30 * time.Second

// profile returns a provider profile by name ("" is the default profile,
// which exists implicitly until one is stored).
func (b *Backend) profile(ctx context.Context, name string) (store.ProviderProfile, error) {
	if name == "" {
		name = DefaultProfile
	}
	p, err := b.opts.Store.ProviderProfile(ctx, name)
	if errors.Is(err, store.ErrNotFound) && name == DefaultProfile {
		return implicitProfile(), nil
	}
	if err != nil {
		return store.ProviderProfile{}, fmt.Errorf("provider profile %q: %w", name, err)
	}
	return p, nil
}

// profiles lists the stored profiles plus the implicit default one.
func (b *Backend) profiles(ctx context.Context) ([]store.ProviderProfile, error) {
	list, err := b.opts.Store.ProviderProfiles(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(list, func(p store.ProviderProfile) bool { return p.Name == DefaultProfile }) {
		list = append([]store.ProviderProfile{implicitProfile()}, list...)
	}
	return list, nil
}

func (b *Backend) providerInfo(p store.ProviderProfile, stored bool) protocol.Provider {
	st := b.keyStatus(p.Name)
	h := p.Headers
	if h == nil {
		h = map[string]string{}
	}
	return protocol.Provider{
		Name: p.Name, BaseURL: p.BaseURL, APIMode: protocol.APIMode(p.APIMode), DefaultModel: p.DefaultModel,
		Headers: h, Proxy: p.Proxy, ContextWindow: p.ContextWindow, Retry: protocol.RetrySettings(p.Retry), Prices: wirePrices(p.Prices),
		KeyConfigured: st.Configured, KeySource: st.Source, Implicit: !stored,
	}
}

func (b *Backend) Providers(ctx context.Context, p protocol.Empty) (protocol.ProvidersListResult, error) {
	stored, err := b.opts.Store.ProviderProfiles(ctx)
	if err != nil {
		return protocol.ProvidersListResult{}, err
	}
	list, err := b.profiles(ctx)
	if err != nil {
		return protocol.ProvidersListResult{}, err
	}
	out := make([]protocol.Provider, len(list))
	for i, pr := range list {
		isStored := slices.ContainsFunc(stored, func(x store.ProviderProfile) bool { return x.Name == pr.Name })
		out[i] = b.providerInfo(pr, isStored)
	}
	return protocol.ProvidersListResult{Providers: out}, nil
}

func (b *Backend) SetProvider(ctx context.Context, p protocol.ProvidersSetParams) (protocol.Provider, error) {
	if !profileName.MatchString(p.Name) {
		return protocol.Provider{}, protocol.InvalidField("name", "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	cur, err := b.opts.Store.ProviderProfile(ctx, p.Name)
	switch {
	case errors.Is(err, store.ErrNotFound) && p.Name == DefaultProfile:
		cur = implicitProfile()
	case errors.Is(err, store.ErrNotFound):
		if p.BaseURL == nil {
			return protocol.Provider{}, protocol.InvalidField("baseUrl", "required for a new provider profile")
		}
		cur = store.ProviderProfile{Name: p.Name, APIMode: openai.ModeAuto}
	case err != nil:
		return protocol.Provider{}, err
	}
	if p.BaseURL != nil {
		if err := checkBaseURL(*p.BaseURL); err != nil {
			return protocol.Provider{}, err
		}
		cur.BaseURL = *p.BaseURL
	}
	if p.APIMode != nil {
		switch *p.APIMode {
		case openai.ModeAuto, openai.ModeResponses, openai.ModeChat:
			cur.APIMode = string(*p.APIMode)
		default:
			return protocol.Provider{}, protocol.InvalidField("apiMode", "must be auto, responses or chat")
		}
	}
	if p.DefaultModel != nil {
		cur.DefaultModel = *p.DefaultModel
	}
	if p.Headers != nil {
		cur.Headers = *p.Headers
	}
	if p.Proxy != nil {
		if err := checkProxy(*p.Proxy); err != nil {
			return protocol.Provider{}, err
		}
		cur.Proxy = *p.Proxy
	}
	if p.ContextWindow != nil {
		if *p.ContextWindow < 0 {
			return protocol.Provider{}, protocol.InvalidField("contextWindow", "must not be negative")
		}
		cur.ContextWindow = *p.ContextWindow
	}
	if p.Retry != nil {
		// The front door decoded the retry object strictly (an unknown
		// member is a typo that would silently leave a default in force).
		r := store.RetrySettings(*p.Retry)
		if err := r.Check(); err != nil {
			return protocol.Provider{}, fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
		}
		cur.Retry = r
	}
	if p.Prices != nil {
		prs, err := storePrices(*p.Prices)
		if err != nil {
			return protocol.Provider{}, err
		}
		cur.Prices = prs
	}
	if err := b.opts.Store.PutProviderProfile(ctx, cur); err != nil {
		return protocol.Provider{}, err
	}
	b.profileChanged(p.Name)
	saved, err := b.opts.Store.ProviderProfile(ctx, p.Name)
	if err != nil {
		return protocol.Provider{}, err
	}
	return b.providerInfo(saved, true), nil
}

// checkBaseURL accepts an absolute http or https URL without credentials.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return protocol.InvalidField("baseUrl", "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return protocol.InvalidField("baseUrl", "must be an http or https URL")
	}
	if u.Host == "" {
		return protocol.InvalidField("baseUrl", "has no host")
	}
	if u.User != nil {
		return protocol.InvalidField("baseUrl", "must not carry credentials (keys belong in the keychain: keys.set)")
	}
	return nil
}

// checkProxy accepts "" (no proxy) or a SOCKS5 URL without a password.
func checkProxy(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return protocol.InvalidField("proxy", "not a URL")
	}
	if u.Scheme != "socks5" && u.Scheme != "socks5h" {
		return protocol.InvalidField("proxy", "must be a socks5:// or socks5h:// URL")
	}
	if u.Host == "" {
		return protocol.InvalidField("proxy", "has no host")
	}
	if _, has := u.User.Password(); has {
		return protocol.InvalidField("proxy", "must not carry a password")
	}
	return nil
}

func (b *Backend) DeleteProvider(ctx context.Context, p protocol.NameParams) (protocol.DeletedResult, error) {
	if err := b.opts.Store.DeleteProviderProfile(ctx, p.Name); err != nil {
		return protocol.DeletedResult{}, fmt.Errorf("provider profile %q: %w", p.Name, err)
	}
	b.profileChanged(p.Name)
	return protocol.DeletedResult{Deleted: true}, nil
}

// profileChanged makes the next model request of every session see a
// profile's (or its key's) new state.
func (b *Backend) profileChanged(name string) {
	b.models.forget(name)
	b.prices.forget(name)
	b.ResetProvider()
}

// modelsCache remembers each profile's model list for ModelsCacheTTL.
type modelsCache struct {
	mu      sync.Mutex // guards entries
	entries map[string]modelsEntry
}

type modelsEntry struct {
	ids []string
	at  time.Time
}

func (c *modelsCache) get(name string, now time.Time) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok || now.Sub(e.at) >= ModelsCacheTTL {
		return nil, false
	}
	return e.ids, true
}

func (c *modelsCache) put(name string, ids []string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]modelsEntry{}
	}
	c.entries[name] = modelsEntry{ids: ids, at: now}
}

func (c *modelsCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, name)
}

func (b *Backend) Models(ctx context.Context, p protocol.ModelsListParams) (protocol.ModelsListResult, error) {
	prof, err := b.profile(ctx, p.Provider)
	if err != nil {
		return protocol.ModelsListResult{}, err
	}
	now := time.Now()
	if ids, ok := b.models.get(prof.Name, now); ok {
		return protocol.ModelsListResult{Provider: prof.Name, Models: ids, Cached: true}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	ids, err := b.providers.openaiFor(prof).Models(ctx)
	if err != nil {
		if k := llm.KindOf(err); k == llm.KindConfig || k == llm.KindAuth {
			return protocol.ModelsListResult{}, fmt.Errorf("%w: models of provider %q: %w", ErrConfig, prof.Name, err)
		}
		return protocol.ModelsListResult{}, fmt.Errorf("models of provider %q: %w", prof.Name, err)
	}
	if ids == nil {
		ids = []string{}
	}
	b.models.put(prof.Name, ids, now)
	return protocol.ModelsListResult{Provider: prof.Name, Models: ids}, nil
}
