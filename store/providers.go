package store

import (
	"context"
	"encoding/json"
	"fmt"
	"net/textproto"
	"net/url"
	"strings"
	"time"
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
	UpdatedAt     time.Time         `json:"updatedAt"`
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
	return nil
}

const profileCols = "name, base_url, api_mode, default_model, proxy, headers, context_window, updated_at"

func scanProfile(r scanner) (ProviderProfile, error) {
	var p ProviderProfile
	var headers []byte
	var updated int64
	if err := r.Scan(&p.Name, &p.BaseURL, &p.APIMode, &p.DefaultModel, &p.Proxy, &headers, &p.ContextWindow, &updated); err != nil {
		return ProviderProfile{}, err
	}
	if err := json.Unmarshal(headers, &p.Headers); err != nil {
		return ProviderProfile{}, fmt.Errorf("%w: headers: %v", ErrCorrupt, err)
	}
	if len(p.Headers) == 0 {
		p.Headers = nil
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
	err = s.write(ctx, func(t *wtx) error {
		_, err := t.tx.ExecContext(t.ctx, "INSERT OR REPLACE INTO provider_profiles ("+profileCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			p.Name, p.BaseURL, p.APIMode, p.DefaultModel, p.Proxy, string(hb), p.ContextWindow, t.nowMS())
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
		res, err := t.tx.ExecContext(t.ctx, "DELETE FROM "+table+" WHERE name = ?", name)
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
