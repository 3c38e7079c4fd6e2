package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimits are the endpoint's request and token budgets, read from the
// x-ratelimit-* headers of a response. A window is nil when the endpoint
// sent none of its headers.
type RateLimits struct {
	Requests *RateLimit `json:"requests,omitempty"`
	Tokens   *RateLimit `json:"tokens,omitempty"`
}

// RateLimit is one budget: its size, what is left of it and when it is
// whole again. A nil Limit or Remaining, or a zero ResetAt, was not sent
// (or could not be read).
type RateLimit struct {
	Limit     *int64    `json:"limit,omitempty"`
	Remaining *int64    `json:"remaining,omitempty"`
	ResetAt   time.Time `json:"resetAt,omitzero"`
}

// ParseRateLimits reads the x-ratelimit-{limit,remaining,reset}-{requests,
// tokens} headers (OpenAI's names, which most compatible endpoints send).
// A reset is a duration from now ("1s", "6m0s", "20ms") or a number of
// seconds. It returns nil when no header of either window could be read.
func ParseRateLimits(h http.Header, now time.Time) *RateLimits {
	out := &RateLimits{Requests: parseWindow(h, "requests", now), Tokens: parseWindow(h, "tokens", now)}
	if out.Requests == nil && out.Tokens == nil {
		return nil
	}
	return out
}

func parseWindow(h http.Header, kind string, now time.Time) *RateLimit {
	var w RateLimit
	w.Limit = parseCount(h.Get("x-ratelimit-limit-" + kind))
	w.Remaining = parseCount(h.Get("x-ratelimit-remaining-" + kind))
	if d, ok := parseReset(h.Get("x-ratelimit-reset-" + kind)); ok {
		w.ResetAt = now.Add(d).UTC()
	}
	if w.Limit == nil && w.Remaining == nil && w.ResetAt.IsZero() {
		return nil
	}
	return &w
}

// parseCount reads a non-negative count; anything else is not sent.
func parseCount(s string) *int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return nil
	}
	return &n
}

// maxReset bounds a reset: a longer one is not a reset time but garbage
// (or a timestamp, which this header does not carry).
const maxReset = 31 * 24 * time.Hour

// parseReset reads a reset delay: a Go-style duration or a number of
// seconds, at most maxReset.
func parseReset(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != f {
			return 0, false
		}
		if f < 0 || f > maxReset.Seconds() {
			return 0, false
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < 0 || d > maxReset {
		return 0, false
	}
	return d, true
}
