package openai

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// API modes.
const (
	ModeAuto      = "auto"      // Responses API first, Chat Completions fallback
	ModeResponses = "responses" // Responses API only
	ModeChat      = "chat"      // Chat Completions only
)

// DefaultBaseURL is the endpoint used when neither Options.BaseURL nor
// OPENAI_BASE_URL names one.
const DefaultBaseURL = "https://api.openai.com/v1"

// Defaults of the reliability knobs.
const (
	DefaultStreamIdle       = 120 * time.Second
	DefaultMaxRetries       = 2
	DefaultNetworkRetryMax  = 2
	DefaultNetworkRetryBase = 800 * time.Millisecond
)

// Options configure a Provider. FromEnv fills them from the environment; New
// applies the remaining defaults to zero fields.
type Options struct {
	// APIKey returns the key at the moment of each request. When nil the
	// OPENAI_API_KEY environment variable is read at each request.
	APIKey func(ctx context.Context) (string, error)
	// BaseURL is the OpenAI-compatible endpoint, e.g. https://api.deepseek.com/v1.
	// Empty: OPENAI_BASE_URL, then DefaultBaseURL.
	BaseURL string
	// HTTPClient sends the requests. When nil, a client with a clone of the
	// default transport (and the SOCKS5 Proxy, when set) is used. Headers and
	// the watchdog wrap its transport in either case.
	HTTPClient *http.Client
	// Headers are extra request headers (gateways, OpenRouter attribution).
	Headers map[string]string
	// Proxy is a SOCKS5 URL (socks5://host:port or socks5h://user:pass@host:port).
	// Empty: SOCKS5_PROXY. Ignored when HTTPClient is set.
	Proxy string
	// APIMode is auto, responses or chat. Empty: OPENAI_FORCE_API_MODE, then auto.
	APIMode string
	// LogDir enables the audit log: LogDir/YYYY-MM-DD/<reqId>.json per request.
	LogDir string
	// Timeout bounds the wait for the response headers of one attempt
	// (OPENAI_TIMEOUT_MS). Zero: the wait is bounded by StreamIdle.
	Timeout time.Duration
	// StreamIdle aborts a stream that produced no byte for this long
	// (OPENAI_STREAM_IDLE_MS). Zero: DefaultStreamIdle.
	StreamIdle time.Duration
	// MaxRetries is how often a 429 or 5xx answer is retried before any
	// content, like the OpenAI SDKs do, each announced by a Retry chunk
	// (OPENAI_MAX_RETRIES).
	MaxRetries int
	// NetworkRetryMax is how often a transient network error before any
	// content is retried, each announced by a Retry chunk (NETWORK_RETRY_MAX).
	NetworkRetryMax int
	// NetworkRetryBase is the first backoff; it doubles per retry
	// (NETWORK_RETRY_BASE_MS). Zero: DefaultNetworkRetryBase.
	NetworkRetryBase time.Duration
}

// FromEnv returns Options read from the environment, with the documented
// defaults for what is unset. APIKey stays nil (read OPENAI_API_KEY per
// request); callers replace it to read a keychain.
func FromEnv() Options {
	return fromLookup(os.Getenv)
}

func fromLookup(env func(string) string) Options {
	return Options{
		BaseURL:          strings.TrimSpace(env("OPENAI_BASE_URL")),
		Proxy:            strings.TrimSpace(env("SOCKS5_PROXY")),
		APIMode:          parseMode(env("OPENAI_FORCE_API_MODE")),
		Timeout:          envMillis(env, "OPENAI_TIMEOUT_MS", 0),
		StreamIdle:       envMillis(env, "OPENAI_STREAM_IDLE_MS", DefaultStreamIdle),
		MaxRetries:       envInt(env, "OPENAI_MAX_RETRIES", DefaultMaxRetries),
		NetworkRetryMax:  envInt(env, "NETWORK_RETRY_MAX", DefaultNetworkRetryMax),
		NetworkRetryBase: envMillis(env, "NETWORK_RETRY_BASE_MS", DefaultNetworkRetryBase),
	}
}

// withDefaults fills the zero string fields from the environment and the
// zero durations with the defaults. Counts are taken as given (0 = none).
func (o Options) withDefaults(env func(string) string) Options {
	if o.BaseURL == "" {
		o.BaseURL = strings.TrimSpace(env("OPENAI_BASE_URL"))
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Proxy == "" && o.HTTPClient == nil {
		o.Proxy = strings.TrimSpace(env("SOCKS5_PROXY"))
	}
	o.APIMode = parseMode(o.APIMode)
	if o.APIMode == ModeAuto {
		o.APIMode = parseMode(env("OPENAI_FORCE_API_MODE"))
	}
	if o.StreamIdle <= 0 {
		o.StreamIdle = DefaultStreamIdle
	}
	if o.NetworkRetryBase <= 0 {
		o.NetworkRetryBase = DefaultNetworkRetryBase
	}
	o.MaxRetries = max(o.MaxRetries, 0)
	o.NetworkRetryMax = max(o.NetworkRetryMax, 0)
	return o
}

func parseMode(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case ModeResponses:
		return ModeResponses
	case ModeChat, "chat_completions", "chat-completions", "completions":
		return ModeChat
	}
	return ModeAuto
}

func envInt(env func(string) string, name string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(env(name)))
	if err != nil || n < 0 {
		return def
	}
	return n
}

func envMillis(env func(string) string, name string, def time.Duration) time.Duration {
	n, err := strconv.ParseInt(strings.TrimSpace(env(name)), 10, 64)
	if err != nil || n <= 0 {
		return def
	}
	return time.Duration(n) * time.Millisecond
}
