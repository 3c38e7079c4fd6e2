package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultMaxRedirects caps a redirect chain when ClientOptions.MaxRedirects
// is zero.
const DefaultMaxRedirects = 5

// ClientOptions configures NewClient.
type ClientOptions struct {
	// HTTPClient is the base client (proxy, TLS settings). Its Transport is
	// cloned when it is an *http.Transport; nil means a clone of
	// http.DefaultTransport. The dial-time address check is added when the
	// transport has no DialContext of its own. A transport with its own
	// DialContext (a SOCKS5 dialer) or a RoundTripper of another type keeps
	// its dialing and gets the before-request check only.
	HTTPClient *http.Client
	// AllowPrivate allows loopback, private and other internal targets.
	AllowPrivate bool
	// MaxRedirects caps the redirect chain: 0 means DefaultMaxRedirects, a
	// negative value follows no redirect.
	MaxRedirects int
}

// NewClient returns an HTTP client that refuses non-http(s) URLs, internal
// addresses (unless AllowPrivate) at every hop and at dial time, and
// redirect chains longer than MaxRedirects. It keeps no cookies.
func NewClient(o ClientOptions) *http.Client {
	base := o.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	maxRedirects := o.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = DefaultMaxRedirects
	}
	var rt http.RoundTripper
	switch t := base.Transport.(type) {
	case nil:
		def := http.DefaultTransport.(*http.Transport).Clone()
		def.DialContext = nil // replaced by the guarded dialer
		rt = guardTransport(def, o.AllowPrivate)
	case *http.Transport:
		rt = guardTransport(t.Clone(), o.AllowPrivate)
	default:
		rt = t
	}
	return &http.Client{
		Transport: &checkedTransport{next: rt, allowPrivate: o.AllowPrivate},
		Timeout:   base.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if maxRedirects < 0 || len(via) > maxRedirects {
				return fmt.Errorf("%w: more than %d", ErrTooManyRedirects, max(maxRedirects, 0))
			}
			return CheckURL(req.URL)
		},
	}
}

// CheckURL refuses URLs that are not absolute http or https URLs with a host.
// It does not resolve the host.
func CheckURL(u *url.URL) error {
	if u == nil {
		return fmt.Errorf("%w: empty URL", ErrScheme)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: %q has no host", ErrScheme, u.Redacted())
	}
	return nil
}

// ParseURL parses and checks a URL given by the model.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrScheme, err)
	}
	if err := CheckURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

// checkedTransport checks every request (including each redirect hop)
// before it goes out: scheme, and the addresses its host resolves to.
type checkedTransport struct {
	next         http.RoundTripper
	allowPrivate bool
}

func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := CheckURL(req.URL); err != nil {
		return nil, err
	}
	if !t.allowPrivate {
		if err := checkHost(req.Context(), req.URL.Hostname()); err != nil {
			return nil, err
		}
	}
	return t.next.RoundTrip(req)
}

// checkHost refuses a host that is, or resolves to, a blocked address. A
// host that does not resolve here is left to the transport (a proxy may
// resolve it); the dial-time check still covers direct connections.
func checkHost(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if Blocked(a) {
			return fmt.Errorf("%w: %s", ErrBlockedAddress, host)
		}
		return nil
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, host)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			return nil
		}
		return err
	}
	for _, a := range addrs {
		if Blocked(a) {
			return fmt.Errorf("%w: %s resolves to %s", ErrBlockedAddress, host, a)
		}
	}
	return nil
}

// guardTransport adds the dial-time check to a transport that dials
// directly. Connections to the transport's own proxy are exempt (the proxy
// is the host's configuration, not the model's choice).
func guardTransport(t *http.Transport, allowPrivate bool) http.RoundTripper {
	if allowPrivate || t.DialContext != nil || t.DialTLSContext != nil {
		return t
	}
	var proxies sync.Map // "host:port" of proxies this transport used
	if proxy := t.Proxy; proxy != nil {
		t.Proxy = func(req *http.Request) (*url.URL, error) {
			u, err := proxy(req)
			if err == nil && u != nil {
				proxies.Store(proxyAddr(u), true)
			}
			return u, err
		}
	}
	plain := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: dialControl}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, ok := proxies.Load(addr); ok {
			return plain.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
	return t
}

// dialControl runs after name resolution, on the address being connected.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check %q", ErrBlockedAddress, address)
	}
	if Blocked(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, ap.Addr())
	}
	return nil
}

func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}
