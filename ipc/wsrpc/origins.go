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
	// An Electron renderer loaded from a custom protocol
	// (protocol.registerSchemesAsPrivileged with standard: true, then
	// protocol.handle("app", …)) sends "app://<host>", whatever the host.
	// One loaded with loadFile sends "Origin: null", like every local HTML
	// file, sandboxed iframe and data: page, so no preset can admit it (see
	// normalizeOrigin).
	"electron": {"app://*"},
	// Tauri 2 serves its webview from tauri://localhost (macOS, Linux) or
	// http(s)://tauri.localhost (Windows).
	"tauri": {"tauri://localhost", "http://tauri.localhost", "https://tauri.localhost"},
}

// ErrBadOrigin: an --allow-origin value that is not an origin or a preset.
var ErrBadOrigin = errors.New("bad origin")

// ExpandOrigins checks the shell's --allow-origin values and expands the
// presets (electron, tauri). An entry is an origin (scheme://host[:port],
// no path) or scheme://* for every host of a custom scheme (never of http
// or https: that would let every web site in); a "*" anywhere else
// (https://*.example.com) is refused, not taken literally. "null" and
// "file://" are refused: Chromium sends "Origin: null" from every file://
// page (and sandboxed iframes and data: pages send it), so allowing it
// would admit any local HTML file that got hold of the token, a
// downloaded page opened in a browser included; an Electron renderer is
// served from a custom scheme instead (the electron preset).
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
	case lv == "null", lv == "file:", strings.HasPrefix(lv, "file://"):
		return "", fmt.Errorf("%w: %q: a file:// page sends \"Origin: null\", as do sandboxed iframes, data: pages and any local HTML file, so it names no shell and is never allowed; "+
			"serve an Electron renderer from a custom scheme (protocol.registerSchemesAsPrivileged with standard: true, protocol.handle(\"app\", …), loadURL(\"app://bundle/index.html\")) and pass --allow-origin electron, "+
			"or connect from the main process (no Origin)", ErrBadOrigin, v)
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
	if strings.Contains(lv, "*") {
		return "", fmt.Errorf("%w: %q: the only wildcard is scheme://* for every host of a custom scheme (myapp://*); name each host of http and https (repeat --allow-origin)", ErrBadOrigin, v)
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
