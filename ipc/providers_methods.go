package ipc

import (
	"bytes"
	"context"
	"encoding/json"
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

func (s *Server) providerRoutes() map[string]handler {
	return map[string]handler{
		"providers.list":   s.providersList,
		"providers.set":    s.providersSet,
		"providers.delete": s.providersDelete,
		"models.list":      s.modelsList,
	}
}

// ProviderInfo is a provider profile on the wire. It never carries a key:
// KeyConfigured and KeySource say whether one is configured and where.
type ProviderInfo = protocol.Provider

// profile returns a provider profile by name ("" is the default profile,
// which exists implicitly until one is stored).
func (s *Server) profile(ctx context.Context, name string) (store.ProviderProfile, error) {
	if name == "" {
		name = DefaultProfile
	}
	p, err := s.opts.Store.ProviderProfile(ctx, name)
	if errors.Is(err, store.ErrNotFound) && name == DefaultProfile {
		return implicitProfile(), nil
	}
	if err != nil {
		return store.ProviderProfile{}, fmt.Errorf("provider profile %q: %w", name, err)
	}
	return p, nil
}

// profiles lists the stored profiles plus the implicit default one.
func (s *Server) profiles(ctx context.Context) ([]store.ProviderProfile, error) {
	list, err := s.opts.Store.ProviderProfiles(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(list, func(p store.ProviderProfile) bool { return p.Name == DefaultProfile }) {
		list = append([]store.ProviderProfile{implicitProfile()}, list...)
	}
	return list, nil
}

func (s *Server) providerInfo(p store.ProviderProfile, stored bool) ProviderInfo {
	st := s.keyStatus(p.Name)
	h := p.Headers
	if h == nil {
		h = map[string]string{}
	}
	return ProviderInfo{
		Name: p.Name, BaseURL: p.BaseURL, APIMode: protocol.APIMode(p.APIMode), DefaultModel: p.DefaultModel,
		Headers: h, Proxy: p.Proxy, ContextWindow: p.ContextWindow, Retry: protocol.RetrySettings(p.Retry),
		KeyConfigured: st.Configured, KeySource: st.Source, Implicit: !stored,
	}
}

func (s *Server) providersList(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.Empty
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	stored, err := s.opts.Store.ProviderProfiles(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.profiles(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ProviderInfo, len(list))
	for i, pr := range list {
		isStored := slices.ContainsFunc(stored, func(x store.ProviderProfile) bool { return x.Name == pr.Name })
		out[i] = s.providerInfo(pr, isStored)
	}
	return protocol.ProvidersListResult{Providers: out}, nil
}

// ProvidersSetParams are the params of providers.set; absent members keep
// the profile's current values (a new profile needs baseUrl, except the
// default profile, whose defaults come from the environment).
type ProvidersSetParams = protocol.ProvidersSetParams

// decodeRetry decodes providers.set's retry object strictly (no unknown
// member, integers only) and checks its ranges.
func decodeRetry(raw json.RawMessage) (store.RetrySettings, error) {
	var r store.RetrySettings
	if raw := bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		return r, invalidField("retry", "must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, invalidField("retry", "members are maxRetries, timeoutMs, streamIdleMs, networkRetryMax, networkRetryBaseMs (non-negative integers): "+err.Error())
	}
	if err := r.Check(); err != nil {
		return r, fmt.Errorf("%w: %s", ErrInvalidParams, strings.TrimPrefix(err.Error(), store.ErrInvalid.Error()+": "))
	}
	return r, nil
}

func (s *Server) providersSet(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p ProvidersSetParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if !profileName.MatchString(p.Name) {
		return nil, invalidField("name", "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	cur, err := s.opts.Store.ProviderProfile(ctx, p.Name)
	switch {
	case errors.Is(err, store.ErrNotFound) && p.Name == DefaultProfile:
		cur = implicitProfile()
	case errors.Is(err, store.ErrNotFound):
		if p.BaseURL == nil {
			return nil, invalidField("baseUrl", "required for a new provider profile")
		}
		cur = store.ProviderProfile{Name: p.Name, APIMode: openai.ModeAuto}
	case err != nil:
		return nil, err
	}
	if p.BaseURL != nil {
		if err := checkBaseURL(*p.BaseURL); err != nil {
			return nil, err
		}
		cur.BaseURL = *p.BaseURL
	}
	if p.APIMode != nil {
		switch *p.APIMode {
		case openai.ModeAuto, openai.ModeResponses, openai.ModeChat:
			cur.APIMode = string(*p.APIMode)
		default:
			return nil, invalidField("apiMode", "must be auto, responses or chat")
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
			return nil, err
		}
		cur.Proxy = *p.Proxy
	}
	if p.ContextWindow != nil {
		if *p.ContextWindow < 0 {
			return nil, invalidField("contextWindow", "must not be negative")
		}
		cur.ContextWindow = *p.ContextWindow
	}
	if p.Retry != nil {
		// The retry object is decoded strictly (an unknown member is a
		// typo that would silently leave a default in force).
		var strict struct {
			Retry json.RawMessage `json:"retry"`
		}
		if err := json.Unmarshal(raw, &strict); err != nil {
			return nil, err
		}
		r, err := decodeRetry(strict.Retry)
		if err != nil {
			return nil, err
		}
		cur.Retry = r
	}
	if err := s.opts.Store.PutProviderProfile(ctx, cur); err != nil {
		return nil, err
	}
	s.profileChanged(p.Name)
	saved, err := s.opts.Store.ProviderProfile(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	return s.providerInfo(saved, true), nil
}

// checkBaseURL accepts an absolute http or https URL without credentials.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return invalidField("baseUrl", "not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalidField("baseUrl", "must be an http or https URL")
	}
	if u.Host == "" {
		return invalidField("baseUrl", "has no host")
	}
	if u.User != nil {
		return invalidField("baseUrl", "must not carry credentials (keys belong in the keychain: keys.set)")
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
		return invalidField("proxy", "not a URL")
	}
	if u.Scheme != "socks5" && u.Scheme != "socks5h" {
		return invalidField("proxy", "must be a socks5:// or socks5h:// URL")
	}
	if u.Host == "" {
		return invalidField("proxy", "has no host")
	}
	if _, has := u.User.Password(); has {
		return invalidField("proxy", "must not carry a password")
	}
	return nil
}

func (s *Server) providersDelete(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.NameParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := s.opts.Store.DeleteProviderProfile(ctx, p.Name); err != nil {
		return nil, fmt.Errorf("provider profile %q: %w", p.Name, err)
	}
	s.profileChanged(p.Name)
	return protocol.DeletedResult{Deleted: true}, nil
}

// profileChanged makes the next model request of every session see a
// profile's (or its key's) new state.
func (s *Server) profileChanged(name string) {
	s.models.forget(name)
	s.ResetProvider()
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

// ModelsListResult is the result of models.list.
type ModelsListResult = protocol.ModelsListResult

func (s *Server) modelsList(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.ModelsListParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	prof, err := s.profile(ctx, p.Provider)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if ids, ok := s.models.get(prof.Name, now); ok {
		return ModelsListResult{Provider: prof.Name, Models: ids, Cached: true}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	ids, err := s.providers.openaiFor(prof).Models(ctx)
	if err != nil {
		if k := llm.KindOf(err); k == llm.KindConfig || k == llm.KindAuth {
			return nil, fmt.Errorf("%w: models of provider %q: %w", ErrConfig, prof.Name, err)
		}
		return nil, fmt.Errorf("models of provider %q: %w", prof.Name, err)
	}
	if ids == nil {
		ids = []string{}
	}
	s.models.put(prof.Name, ids, now)
	return ModelsListResult{Provider: prof.Name, Models: ids}, nil
}
