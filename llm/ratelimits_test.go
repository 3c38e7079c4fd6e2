package llm

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRateLimits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		h    map[string]string
		want *RateLimits
	}{
		{"none", nil, nil},
		{"openai", map[string]string{
			"X-Ratelimit-Limit-Requests": "60", "X-Ratelimit-Remaining-Requests": "59", "X-Ratelimit-Reset-Requests": "1s",
			"X-Ratelimit-Limit-Tokens": "150000", "X-Ratelimit-Remaining-Tokens": "149984", "X-Ratelimit-Reset-Tokens": "6m0s",
		}, &RateLimits{
			Requests: &RateLimit{Limit: n(60), Remaining: n(59), ResetAt: now.Add(time.Second)},
			Tokens:   &RateLimit{Limit: n(150000), Remaining: n(149984), ResetAt: now.Add(6 * time.Minute)},
		}},
		{"seconds and one window", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1.5"},
			&RateLimits{Tokens: &RateLimit{Remaining: n(0), ResetAt: now.Add(1500 * time.Millisecond)}}},
		{"garbage is absent", map[string]string{"x-ratelimit-limit-requests": "-1", "x-ratelimit-remaining-requests": "many", "x-ratelimit-reset-requests": "NaN",
			"x-ratelimit-reset-tokens": "1767225600"}, nil},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		require.Equal(t, tc.want, ParseRateLimits(h, now), tc.name)
	}
}

func FuzzParseRateLimits(f *testing.F) {
	f.Add("60", "1s", "6m0s")
	f.Add("-1", "NaN", "1e308")
	f.Fuzz(func(t *testing.T, limit, reset, treset string) {
		h := http.Header{}
		h.Set("x-ratelimit-limit-requests", limit)
		h.Set("x-ratelimit-reset-requests", reset)
		h.Set("x-ratelimit-reset-tokens", treset)
		rl := ParseRateLimits(h, time.Unix(0, 0))
		if rl == nil {
			return
		}
		for _, w := range []*RateLimit{rl.Requests, rl.Tokens} {
			if w == nil {
				continue
			}
			if w.Limit != nil && *w.Limit < 0 {
				t.Fatalf("negative limit %d", *w.Limit)
			}
			if !w.ResetAt.IsZero() && w.ResetAt.Sub(time.Unix(0, 0)) > maxReset {
				t.Fatalf("reset beyond the bound: %v", w.ResetAt)
			}
		}
	})
}
