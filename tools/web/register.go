package web

import (
	"net/http"
	"time"

	"github.com/zqagent/sidecar/tools"
)

// Defaults of Options.
const (
	DefaultMaxBytes  = 5 << 20 // downloaded bytes per fetch
	DefaultMaxChars  = 100_000 // characters of text returned to the model
	DefaultTimeout   = 30 * time.Second
	DefaultUserAgent = "zqagent-sidecar/1 (web_fetch)"
)

// Options configures the web tools. The zero value is usable: no private
// targets, no search backend, default caps.
type Options struct {
	// HTTPClient is the base client for web_fetch (proxy, TLS); see
	// ClientOptions.HTTPClient. backend.NewEngine sets one that dials
	// through SOCKS5_PROXY when that is set.
	HTTPClient *http.Client
	// AllowPrivate lets web_fetch reach loopback and private addresses.
	AllowPrivate bool
	// Search backs web_search. While it is nil (or a SwitchableBackend
	// that is not Configured), web_search is not offered to the model and a
	// call to it is refused.
	Search SearchBackend
	// MaxBytes caps the download (default 5 MB).
	MaxBytes int64
	// MaxChars caps the text returned to the model (default 100,000); the
	// model's max_chars can only lower it.
	MaxChars int
	// Timeout bounds one call, redirects included (default 30s).
	Timeout time.Duration
	// MaxRedirects caps redirect chains (0: 5; negative: none followed).
	MaxRedirects int
	// UserAgent is sent with every fetch (default DefaultUserAgent).
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	return o
}

var networkMeta = tools.Metadata{
	Category:         "network",
	RiskLevel:        tools.RiskMedium,
	Class:            tools.ClassNetwork,
	RequiresApproval: true,
}

// RegisterWebTools registers web_fetch and web_search.
func RegisterWebTools(reg *tools.Registry, opts Options) {
	opts = opts.withDefaults()
	f := &fetcher{
		opts: opts,
		client: NewClient(ClientOptions{
			HTTPClient:   opts.HTTPClient,
			AllowPrivate: opts.AllowPrivate,
			MaxRedirects: opts.MaxRedirects,
		}),
	}
	meta := networkMeta
	meta.Capabilities = []string{"network", "fetch"}
	reg.MustRegister(tools.Spec{
		Name:    "web_fetch",
		Schema:  schema("web_fetch", webFetchDescription, tools.ParamsOf[fetchArgs]()),
		Meta:    meta,
		Handler: f.handle,
	})
	s := &searcher{backend: opts.Search, timeout: opts.Timeout}
	meta = networkMeta
	meta.Capabilities = []string{"network", "search"}
	reg.MustRegister(tools.Spec{
		Name:      "web_search",
		Schema:    schema("web_search", webSearchDescription, tools.ParamsOf[searchArgs]()),
		Meta:      meta,
		Handler:   s.handle,
		Available: s.available,
	})
}
