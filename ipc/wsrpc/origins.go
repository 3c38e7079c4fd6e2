package wsrpc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Origin presets name the origins of real shells, so that a shell passes
// --allow-origin electron instead of guessing what its renderer sends.
var originPresets = map[string][]string{
	// An Electron renderer loaded from a file sends "Origin: file://"; one
	// loaded from a custom protocol (protocol.handle("app", …), registered
	// as standard) sends "app://<host>", whatever the host.
	"electron": {"file://", "app://*"},
	// Tauri 2 serves its webview from tauri://localhost (macOS, Linux) or
	// http(s)://tauri.localhost (Windows).
	"tauri": {"tauri://localhost", "http://tauri.localhost", "https://tauri.localhost"},
}

// ErrBadOrigin: an --allow-origin value that is not an origin or a preset.
var ErrBadOrigin = errors.New("bad origin")

// ExpandOrigins checks the shell's --allow-origin values and expands the
// presets (electron, tauri). An entry is an origin (scheme://host[:port],
// no path), "file://", or scheme://* for every host of a custom scheme
// (never of http or https: that would let every web site in). "null" is
// refused: sandboxed iframes and data: pages send it, so it names no shell.
func ExpandOrigins(in []string) ([]string, error) {
	var out []string
	for _, v := range in {
		v = strings.TrimSpace(v)
		if p, ok := originPresets[strings.ToLower(v)]; ok {
			out = append(out, p...)
			continue
		}
		o, err := normalizeOrigin(v)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// normalizeOrigin checks one allowed origin and returns its canonical form.
func normalizeOrigin(v string) (string, error) {
	lv := strings.ToLower(strings.TrimRight(v, "/"))
	switch {
	case lv == "":
		return "", fmt.Errorf("%w: empty --allow-origin", ErrBadOrigin)
	case lv == "null":
		return "", fmt.Errorf("%w: %q names no shell (sandboxed iframes send it); an Electron file:// renderer sends \"file://\": use --allow-origin electron", ErrBadOrigin, v)
	case lv == "file:":
		return "file://", nil
	}
	scheme, rest, ok := strings.Cut(lv, "://")
	if !ok || scheme == "" || rest == "" {
		return "", fmt.Errorf("%w: %q is not scheme://host[:port] (presets: electron, tauri)", ErrBadOrigin, v)
	}
	if rest == "*" {
		if scheme == "http" || scheme == "https" {
			return "", fmt.Errorf("%w: %q would let every web site connect; name the host", ErrBadOrigin, v)
		}
		return scheme + "://*", nil
	}
	u, err := url.Parse(lv)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%w: %q is not scheme://host[:port] (no path; presets: electron, tauri)", ErrBadOrigin, v)
	}
	return scheme + "://" + u.Host, nil
}

// originAllowed reports whether an upgrade's Origin is allowed: equal to an
// allowed origin (case and a trailing slash aside), of a scheme allowed
// with "*", or, for http and https on a loopback host, equal to one
// allowed on another loopback name (a dev server at localhost:5173 is also
// 127.0.0.1:5173 and [::1]:5173).
func (e *Endpoint) originAllowed(origin string) bool {
	got := canonicalOrigin(origin)
	for _, o := range e.origins {
		if o == got {
			return true
		}
		if scheme, ok := strings.CutSuffix(o, "://*"); ok && strings.HasPrefix(got, scheme+"://") && got != scheme+"://" {
			return true
		}
	}
	return false
}

// SetOrigins expands and checks the allowed origins (ExpandOrigins) and
// keeps them canonical; it is called before the first request.
func (e *Endpoint) SetOrigins(in []string) error {
	out, err := ExpandOrigins(in)
	if err != nil {
		return err
	}
	for i, o := range out {
		out[i] = canonicalOrigin(o)
	}
	e.origins = out
	return nil
}

// canonicalOrigin lowercases an origin, drops a trailing slash and writes
// a loopback host of http(s) as "loopback" (the port is kept).
func canonicalOrigin(o string) string {
	o = strings.ToLower(strings.TrimRight(o, "/"))
	if o == "file:" {
		return "file://"
	}
	scheme, hostport, ok := strings.Cut(o, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return o
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	switch strings.Trim(host, "[]") {
	case "localhost", "127.0.0.1", "::1":
		if port != "" {
			return scheme + "://loopback:" + port
		}
		return scheme + "://loopback"
	}
	return o
}
