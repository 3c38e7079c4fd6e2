// Package netproxy owns the outbound proxy of everything the sidecar sends
// to the network: the model provider, web_fetch, web_search and the media
// tool's URL downloads all dial through the SOCKS5 proxy named by
// SOCKS5_PROXY (socks5://host:port or socks5h://user:pass@host:port), so that
// a user behind a proxy is never reached around it. HTTP(S) proxies are not
// supported (as in the seed). A malformed proxy URL is an error, never a
// silent direct connection.
//
// The functions are pure and safe for concurrent use; the clients they
// return are ordinary *http.Client values.
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/net/proxy"
)

// EnvVar names the proxy in the environment.
const EnvVar = "SOCKS5_PROXY"

// ErrBadProxy: the proxy URL is not a usable SOCKS5 URL.
var ErrBadProxy = errors.New("invalid SOCKS5 proxy")

// DialFunc is an http.Transport DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// FromEnv returns SOCKS5_PROXY, trimmed ("" when unset).
func FromEnv() string { return strings.TrimSpace(os.Getenv(EnvVar)) }

// Dialer returns a dialer that connects through the SOCKS5 proxy at raw.
func Dialer(raw string) (DialFunc, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "socks5" && u.Scheme != "socks5h") {
		return nil, fmt.Errorf("%w: want socks5://host:port", ErrBadProxy)
	}
	d, err := proxy.FromURL(u, &net.Dialer{Timeout: 30 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadProxy, err)
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok {
		return nil, fmt.Errorf("%w: dialer without context", ErrBadProxy)
	}
	return cd.DialContext, nil
}

// Client returns an HTTP client whose transport (a clone of the default
// one, environment HTTP proxies off) dials through the SOCKS5 proxy at raw;
// nil when raw is "".
func Client(raw string) (*http.Client, error) {
	if raw == "" {
		return nil, nil
	}
	dial, err := Dialer(raw)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = dial
	return &http.Client{Transport: tr}, nil
}

// EnvClient is Client(FromEnv()).
func EnvClient() (*http.Client, error) {
	c, err := Client(FromEnv())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvVar, err)
	}
	return c, nil
}
