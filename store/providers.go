package store

import (
	"context"
	"encoding/json"
	"fmt"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/zqagent/sidecar/llm/prices"
)

// ProviderProfile is an OpenAI-compatible endpoint. It has no API key field:
// keys live in the OS keychain (package keychain), never here.
type ProviderProfile struct {
	Name          string            `json:"name"`
	BaseURL       string            `json:"baseUrl"`
	APIMode       string            `json:"apiMode"` // auto | responses | chat
	DefaultModel  string            `json:"defaultModel"`
	Proxy         string            `json:"proxy,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
	ContextWindow int               `json:"contextWindow,omitempty"`
	// Retry overrides the environment's retry and timeout settings for
	// this profile's requests.
	Retry RetrySettings `json:"retry"`
	// Prices are the profile's own prices per model id (USD per 1M
	// tokens); they replace the default table's for its sessions.
	Prices    map[string]prices.Price `json:"prices,omitempty"`
	UpdatedAt time.Time               `json:"updatedAt"`
}

// MaxPrices bounds a profile's price entries.
const MaxPrices = 1000

// RetrySettings override a profile's reliability settings; a nil member
// keeps the environment's value (OPENAI_MAX_RETRIES, OPENAI_TIMEOUT_MS,
// OPENAI_STREAM_IDLE_MS, NETWORK_RETRY_MAX, NETWORK_RETRY_BASE_MS) or its
// default. Stored as a JSON object in provider_profiles.retry.
type RetrySettings struct {
	MaxRetries         *int   `json:"maxRetries,omitempty"`
	TimeoutMS          *int64 `json:"timeoutMs,omitempty"`
	StreamIdleMS       *int64 `json:"streamIdleMs,omitempty"`
	NetworkRetryMax    *int   `json:"networkRetryMax,omitempty"`
	NetworkRetryBaseMS *int64 `json:"networkRetryBaseMs,omitempty"`
}

// Limits of RetrySettings.
const (
	MaxRetryCount  = 20
	MaxRetryMillis = 3_600_000 // one hour
)

// Check reports the first member out of range: counts 0..MaxRetryCount,
// times 0..MaxRetryMillis (0 = the default, and for timeoutMs no bound).
// The error names the member (its JSON name).
func (r RetrySettings) Check() error {
	for _, c := range []struct {
		name string
		v    *int64
		max  int64
	}{
		{"maxRetries", intPtr64(r.MaxRetries), MaxRetryCount},
		{"timeoutMs", r.TimeoutMS, MaxRetryMillis},
		{"streamIdleMs", r.StreamIdleMS, MaxRetryMillis},
		{"networkRetryMax", intPtr64(r.NetworkRetryMax), MaxRetryCount},
		{"networkRetryBaseMs", r.NetworkRetryBaseMS, MaxRetryMillis},
	} {
		if c.v != nil && (*c.v < 0 || *c.v > c.max) {
			return fmt.Errorf("%w: retry.%s must be between 0 and %d", ErrInvalid, c.name, c.max)
		}
	}
	return nil
}

func intPtr64(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

// credentialHeaders are refused in profiles: a key must never reach the
// database.
var credentialHeaders = map[string]bool{
	"Authorization": true, "Proxy-Authorization": true, "Api-Key": true, "X-Api-Key": true,
	"Cookie": true, "X-Goog-Api-Key": true, "Openai-Api-Key": true,
}

func checkProfile(p *ProviderProfile) error {
	if p.Name == "" {
		return fmt.Errorf("%w: provider profile without a name", ErrInvalid)
	}
	if p.APIMode == "" {
		p.APIMode = "auto"
	}
	if p.APIMode != "auto" && p.APIMode != "responses" && p.APIMode != "chat" {
		return fmt.Errorf("%w: api mode %q", ErrInvalid, p.APIMode)
	}
	for k := range p.Headers {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if credentialHeaders[ck] || strings.Contains(strings.ToLower(ck), "token") || strings.Contains(strings.ToLower(ck), "secret") {
			return fmt.Errorf("%w: header %q carries a credential; keys belong in the keychain", ErrInvalid, k)
		}
	}
	if p.Proxy != "" {
		u, err := url.Parse(p.Proxy)
		if err != nil {
			return fmt.Errorf("%w: proxy URL: %v", ErrInvalid, err)
		}
		if _, hasPass := u.User.Password(); hasPass {
			return fmt.Errorf("%w: proxy URL carries a password", ErrInvalid)
		}
	}
	if u, err := url.Parse(p.BaseURL); err == nil && u.User != nil {
		return fmt.Errorf("%w: base URL carries credentials", ErrInvalid)
	}
	if len(p.Prices) > MaxPrices {
		return fmt.Errorf("%w: more than %d prices", ErrInvalid, MaxPrices)
	}
	for model, pr := range p.Prices {
		if strings.TrimSpace(model) == "" || len(model) > 256 {
			return fmt.Errorf("%w: prices: a model id must be 1 to 256 characters", ErrInvalid)
		}
		if err := pr.Check(); err != nil {
			return fmt.Errorf("%w: prices.%s: %v", ErrInvalid, model, err)
		}
	}
	return p.Retry.Check()
}

const profileCols = "name, base_url, api_mode, default_model, proxy, headers, context_window, retry, prices, updated_at"

func scanProfile(r scanner) (ProviderProfile, error) {
	var p ProviderProfile
	var headers, retry, prs []byte
	var updated int64
	if err := r.Scan(&p.Name, &p.BaseURL, &p.APIMode, &p.DefaultModel, &p.Proxy, &headers, &p.ContextWindow, &retry, &prs, &updated); err != nil {
		return ProviderProfile{}, err
	}
	if err := json.Unmarshal(headers, &p.Headers); err != nil {
		return ProviderProfile{}, fmt.Errorf("%w: headers: %v", ErrCorrupt, err)
	}
	if err := json.Unmarshal(retry, &p.Retry); err != nil {
		return ProviderProfile{}, fmt.Errorf("%w: retry: %v", ErrCorrupt, err)
	}
	if err := json.Unmarshal(prs, &p.Prices); err != nil {
		return ProviderProfile{}, fmt.Errorf("%w: prices: %v", ErrCorrupt, err)
	}
	if len(p.Headers) == 0 {
		p.Headers = nil
	}
	if len(p.Prices) == 0 {
		p.Prices = nil
	}
	p.UpdatedAt = fromMS(updated)
	return p, nil
}

// ProviderProfiles returns every profile, by name.
func (s *Store) ProviderProfiles(ctx context.Context) ([]ProviderProfile, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT "+profileCols+" FROM provider_profiles ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("provider profiles: %w", err)
	}
	defer rows.Close()
	out := []ProviderProfile{}
	for rows.Next() {
		p, err := scanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("provider profiles: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("provider profiles: %w", err)
	}
	return out, nil
}

// ProviderProfile returns a profile by name.
func (s *Store) ProviderProfile(ctx context.Context, name string) (ProviderProfile, error) {
	p, err := scanProfile(s.rdb.QueryRowContext(ctx, "SELECT "+profileCols+" FROM provider_profiles WHERE name = ?", name))
	if err != nil {
		return ProviderProfile{}, fmt.Errorf("provider profile: %w", notFound(err, "provider profile", name))
	}
	return p, nil
}

// PutProviderProfile creates or replaces a profile. Headers that carry
// credentials and URLs with passwords are refused (ErrInvalid).
func (s *Store) PutProviderProfile(ctx context.Context, p ProviderProfile) error {
	if err := checkProfile(&p); err != nil {
		return fmt.Errorf("put provider profile: %w", err)
	}
	headers := p.Headers
	if headers == nil {
		headers = map[string]string{}
	}
	hb, err := json.Marshal(headers)
	if err != nil {
		return fmt.Errorf("put provider profile: %w", err)
	}
	rb, err := json.Marshal(p.Retry)
	if err != nil {
		return fmt.Errorf("put provider profile: %w", err)
	}
	prs := p.Prices
	if prs == nil {
		prs = map[string]prices.Price{}
	}
	pb, err := json.Marshal(prs)
	if err != nil {
		return fmt.Errorf("put provider profile: %w", err)
	}
	err = s.write(ctx, func(t *wtx) error {
		_, err := t.exec("INSERT OR REPLACE INTO provider_profiles ("+profileCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			p.Name, p.BaseURL, p.APIMode, p.DefaultModel, p.Proxy, string(hb), p.ContextWindow, string(rb), string(pb), t.nowMS())
		return err
	})
	if err != nil {
		return fmt.Errorf("put provider profile %q: %w", p.Name, err)
	}
	return nil
}

// DeleteProviderProfile removes a profile (ErrNotFound when absent).
func (s *Store) DeleteProviderProfile(ctx context.Context, name string) error {
	return s.deleteByName(ctx, "provider_profiles", "provider profile", name)
}

func (s *Store) deleteByName(ctx context.Context, table, what, name string) error {
	err := s.write(ctx, func(t *wtx) error {
		res, err := t.exec("DELETE FROM "+table+" WHERE name = ?", name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s %q: %w", what, name, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	return nil
}
