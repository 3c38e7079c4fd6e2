package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Sign-in flow: Login builds mcp-go's OAuthHandler for the server (client
// registration when no client id is configured, the authorization URL
// with PKCE and a fresh state), listens on a loopback callback and returns
// the URL for the shell to open. The callback takes one answer with the
// expected path and state (a wrong state is refused and changes nothing),
// exchanges the code (the tokens go to the keychain), and the server is
// reconnected with them. A sign-in nobody completes ends after
// Options.LoginTimeout and frees the port; the outcome of every sign-in
// that ends is in the server's status (mcp.status): connected, or
// needs_auth with lastError saying why.

// CallbackPath is the loopback callback's path: the redirect URI is
// http://127.0.0.1:<port>/callback.
const CallbackPath = "/callback"

// DefaultLoginTimeout bounds a sign-in: the browser's answer must come
// within it.
const DefaultLoginTimeout = 5 * time.Minute

// clientName is how dynamic registration names the sidecar.
const clientName = "zqagent sidecar"

// exchangeTimeout bounds the code exchange of a callback.
const exchangeTimeout = 30 * time.Second

// errLoginCancelled ends a sign-in that a newer Login or a Logout replaced;
// nothing is reported for it.
var errLoginCancelled = errors.New("sign-in cancelled")

// login is one sign-in waiting for its callback.
type login struct {
	m        *Manager
	server   string
	rawURL   string // the server's URL as configured, to tell a config changed since
	state    string
	verifier string
	handler  *transport.OAuthHandler
	store    *tokenStore
	ln       net.Listener
	port     int

	taken  atomic.Bool   // a callback with the right state came: the only one used
	result chan error    // the callback's outcome (buffered)
	stop   chan error    // ends the sign-in early (buffered)
	done   chan struct{} // closed once its port is free
}

// Login starts signing in to an http or sse server and returns the
// authorization URL the user opens in a browser. Its host is the
// authorization server's, from the server's metadata: show it. The
// sign-in ends when the browser comes back to the loopback callback, at
// Options.LoginTimeout, at a newer Login or Logout of the server, or when
// the manager closes; its outcome is reported by OnStatus. The server must
// be enabled and trusted (discovery contacts it).
func (m *Manager) Login(ctx context.Context, name string) (string, error) {
	si := m.signIns
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return "", ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return "", fmt.Errorf("login %s: %w", name, ErrUnknownServer)
	}
	raw := s.cfg.Clone()
	trust := m.trustLocked(s.cfg)
	m.mu.Unlock()
	switch {
	case raw.Type != TypeHTTP && raw.Type != TypeSSE:
		return "", fmt.Errorf("login %s: %w (it is %s)", name, ErrNotRemote, raw.Type)
	case !raw.Enabled:
		return "", fmt.Errorf("login %s: %w", name, ErrDisabled)
	case trust != TrustTrusted:
		return "", fmt.Errorf("login %s: %w (%s: approve it with mcp.trust)", name, ErrUntrusted, trust)
	case hasAuthHeader(raw):
		return "", fmt.Errorf("login %s: %w: remove it to sign in with OAuth", name, ErrStaticAuth)
	case si.secrets == nil:
		return "", fmt.Errorf("login %s: %w", name, ErrNoSecrets)
	}
	set, err := raw.OAuth()
	if err != nil {
		return "", fmt.Errorf("login %s: %w", name, err)
	}
	set = expandOAuth(set, lookupVar)
	cfg := expandConfig(raw, lookupVar)
	if err := cfg.Validate(); err != nil {
		return "", fmt.Errorf("login %s: %w", name, err)
	}
	si.mu.Lock()
	md, prev := si.metadata[name], si.logins[name]
	si.mu.Unlock()
	if prev != nil {
		// A newer sign-in replaces it; its port (maybe the fixed one) is
		// freed first.
		prev.end(errLoginCancelled)
		select {
		case <-prev.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(set.CallbackPort)))
	if err != nil {
		return "", fmt.Errorf("login %s: %w: 127.0.0.1:%d: %v", name, ErrCallbackPort, set.CallbackPort, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	redirect := "http://127.0.0.1:" + strconv.Itoa(port) + CallbackPath
	st := &tokenStore{secrets: si.secrets, account: SignInAccount(name, cfg.URL),
		entry: signIn{Server: name, URL: cfg.URL, RedirectURI: redirect, ResourceMetadata: md}}
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID: set.ClientID, ClientSecret: set.ClientSecret, RedirectURI: redirect, Scopes: set.Scopes,
		TokenStore: st, PKCEEnabled: true, ProtectedResourceMetadataURL: md,
	})
	h.SetBaseURL(resourceBase(cfg.URL))
	fail := func(err error) (string, error) {
		ln.Close()
		// Outside text (an error body of the authorization server) is
		// clipped: it is an RPC error and a log line.
		return "", fmt.Errorf("login %s: %w: %s", name, ErrLoginFailed, printable(err.Error(), 3*maxReason))
	}
	// Before anything is sent to it: the authorization server's endpoints
	// carry the client secret, the code and the tokens.
	asm, err := h.GetServerMetadata(ctx)
	if err != nil {
		return fail(fmt.Errorf("authorization server metadata: %v", err))
	}
	if err := checkASEndpoints(asm); err != nil {
		return fail(err)
	}
	if set.ClientID == "" {
		if err := h.RegisterClient(ctx, clientName); err != nil {
			return fail(fmt.Errorf("dynamic client registration: %s; register a client with the server's authorization server and set oauth.clientId in the server's config", printable(err.Error(), maxReason)))
		}
	}
	st.entry.ClientID, st.entry.ClientSecret, st.entry.AuthMethod = h.GetClientID(), h.GetClientSecret(), h.GetTokenEndpointAuthMethod()
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return fail(err)
	}
	state, err := transport.GenerateState()
	if err != nil {
		return fail(err)
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return fail(err)
	}
	if err := checkAuthURL(authURL); err != nil {
		return fail(err)
	}

	l := &login{
		m: m, server: name, rawURL: raw.URL, state: state, verifier: verifier, handler: h, store: st,
		ln: ln, port: port, result: make(chan error, 1), stop: make(chan error, 1), done: make(chan struct{}),
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		ln.Close()
		return "", ErrClosed
	}
	si.mu.Lock()
	old := si.logins[name]
	si.logins[name] = l
	si.mu.Unlock()
	// Under the lock, so never after CloseAll's Wait.
	m.wg.Go(l.run)
	m.mu.Unlock()
	if old != nil {
		old.end(errLoginCancelled)
	}
	m.log.Info("mcp sign-in started", "server", name, "callback", redirect)
	return authURL, nil
}

// Logout forgets a server's sign-in: a sign-in in progress ends, the
// keychain entry is removed (none is not an error) and the live
// connection's token is dropped; then the server is reconnected (when it
// is enabled and trusted), so its state says what it is without the
// sign-in (needs_auth for one that wants it).
func (m *Manager) Logout(ctx context.Context, name string) error {
	si := m.signIns
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("logout %s: %w", name, ErrUnknownServer)
	}
	raw := s.cfg.Clone()
	reconnect := s.cfg.Enabled && m.trustLocked(s.cfg) == TrustTrusted
	m.mu.Unlock()
	switch {
	case raw.Type != TypeHTTP && raw.Type != TypeSSE:
		return fmt.Errorf("logout %s: %w (it is %s)", name, ErrNotRemote, raw.Type)
	case si.secrets == nil:
		return fmt.Errorf("logout %s: %w", name, ErrNoSecrets)
	}
	cfg := expandConfig(raw, lookupVar)
	si.mu.Lock()
	l, st := si.logins[name], si.stores[name]
	delete(si.stores, name)
	si.mu.Unlock()
	if l != nil {
		l.end(errLoginCancelled)
	}
	if st != nil {
		st.revoke()
	}
	if err := si.secrets.Delete(ctx, SignInAccount(name, cfg.URL)); err != nil && !errors.Is(err, ErrNoSignIn) {
		return fmt.Errorf("logout %s: %w", name, err)
	}
	m.log.Info("mcp signed out", "server", name)
	if reconnect {
		// A failed reconnect is the server's state, not the logout's error.
		if err := m.Refresh(ctx, name); err != nil && ctx.Err() != nil {
			return fmt.Errorf("logout %s: %w", name, ctx.Err())
		}
	}
	return nil
}

// end stops the sign-in early with err (once; later calls do nothing).
func (l *login) end(err error) {
	select {
	case l.stop <- err:
	default:
	}
}

// run serves the callback until the sign-in ends, frees the port, then
// reconnects the server (signed in) or reports why not.
func (l *login) run() {
	m := l.m
	srv := &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(l.ln) })
	timeout := m.signIns.timeout
	timer := time.NewTimer(timeout)
	var err error
	select {
	case err = <-l.result:
	case err = <-l.stop:
	case <-timer.C:
		err = fmt.Errorf("%w: the browser did not come back within %s", ErrLoginFailed, timeout)
	case <-m.dialer.base.Done():
		err = ErrClosed
	}
	timer.Stop()
	if err != nil {
		l.store.revoke() // a code exchange still running stores nothing
	}
	// Shutdown closes the listener (the port is free from here) and lets
	// the answer page finish; Close ends what is left.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = srv.Shutdown(sctx)
	cancel()
	_ = srv.Close()
	wg.Wait()
	close(l.done)

	m.signIns.mu.Lock()
	if m.signIns.logins[l.server] == l {
		delete(m.signIns.logins, l.server)
	}
	m.signIns.mu.Unlock()
	m.loginEnded(l, err)
}

// loginEnded reconnects a signed-in server, or reports why a sign-in
// failed: the server stays (or becomes) needs_auth with the reason as its
// lastError.
func (m *Manager) loginEnded(l *login, err error) {
	switch {
	case errors.Is(err, errLoginCancelled), errors.Is(err, ErrClosed):
		return
	case err == nil:
		m.log.Info("mcp signed in", "server", l.server)
		if err := m.Refresh(m.dialer.base, l.server); err != nil {
			m.log.Warn("mcp reconnect after sign-in", "server", l.server, "err", err)
		}
		return
	}
	m.log.Warn("mcp sign-in failed", "server", l.server, "err", err)
	m.mu.Lock()
	s := m.servers[l.server]
	if s != nil && !m.closed && s.conn == nil && s.cfg.URL == l.rawURL &&
		(s.state == StateNeedsAuth || s.state == StateFailed || s.state == StateClosed) {
		s.state, s.lastErr = StateNeedsAuth, err.Error()
		m.announceLocked(s)
	}
	m.mu.Unlock()
	m.flush()
}

// ServeHTTP is the loopback callback: GET /callback on 127.0.0.1 with the
// sign-in's state, answered once.
func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != CallbackPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if p := strconv.Itoa(l.port); r.Host != "127.0.0.1:"+p && r.Host != "localhost:"+p {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(l.state)) != 1 {
		l.m.log.Warn("mcp sign-in callback refused: wrong state", "server", l.server)
		answerPage(w, http.StatusBadRequest, l.server, errors.New("this answer does not belong to the sign-in in progress (wrong state); nothing was stored"))
		return
	}
	if !l.taken.CompareAndSwap(false, true) {
		answerPage(w, http.StatusConflict, l.server, errors.New("this sign-in was already answered"))
		return
	}
	err := l.exchange(r.Context(), q)
	status := http.StatusOK
	if err != nil {
		status = http.StatusBadRequest
	}
	answerPage(w, status, l.server, err)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	l.result <- err
}

// exchange turns the callback's answer into tokens (kept in the keychain
// by the token store), or says why it cannot.
func (l *login) exchange(ctx context.Context, q url.Values) error {
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		return fmt.Errorf("%w: the authorization server refused the sign-in (%s)", ErrLoginFailed, printable(msg, maxReason))
	}
	code := q.Get("code")
	if code == "" {
		return fmt.Errorf("%w: the callback carried no authorization code", ErrLoginFailed)
	}
	ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	if err := l.handler.ProcessAuthorizationResponse(ctx, code, q.Get("state"), l.verifier); err != nil {
		// The token endpoint's error body is in err: clipped, it goes to
		// lastError (mcp.status), the log and the browser's page.
		return fmt.Errorf("%w: code exchange: %s", ErrLoginFailed, printable(err.Error(), maxReason))
	}
	return nil
}

// answerPage is what the browser shows after the redirect.
func answerPage(w http.ResponseWriter, status int, server string, err error) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	msg := "Signed in to " + server + ". You can close this window."
	if err != nil {
		msg = "Sign-in to " + server + " failed: " + err.Error()
	}
	_, _ = io.WriteString(w, "<!doctype html><meta charset=utf-8><title>MCP sign-in</title><p>"+html.EscapeString(msg)+"</p>\n")
}

// checkAuthURL accepts an authorization URL the shell may open: absolute
// https, or http to a loopback host.
func checkAuthURL(s string) error {
	return checkEndpoint("authorization URL", s)
}

// checkASEndpoints accepts an authorization server whose endpoints are
// https, or http to a loopback host (OAuth 2.1 §1.5): a token endpoint
// in clear text would hand the code, the client secret and the tokens to
// anyone on the path.
func checkASEndpoints(md *transport.AuthServerMetadata) error {
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", md.AuthorizationEndpoint},
		{"token_endpoint", md.TokenEndpoint},
		{"registration_endpoint", md.RegistrationEndpoint},
	} {
		if e.url == "" && e.name == "registration_endpoint" {
			continue
		}
		if err := checkEndpoint("the authorization server's "+e.name, e.url); err != nil {
			return err
		}
	}
	return nil
}

// checkEndpoint accepts an absolute https URL, or http to a loopback host.
func checkEndpoint(what, s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	switch {
	case u.Host == "" || u.User != nil:
		return fmt.Errorf("%s %q is not an absolute https URL", what, u.Redacted())
	case strings.EqualFold(u.Scheme, "https"):
		return nil
	case strings.EqualFold(u.Scheme, "http") && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%s %q is not https (http is accepted for a loopback host only)", what, u.Redacted())
}

// resourceBase is the server URL without query and fragment: what mcp-go's
// transports discover from.
func resourceBase(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// printable clips outside text for a status line and drops its control
// characters.
func printable(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if len(s) > limit {
		for limit > 0 && !utf8.RuneStart(s[limit]) {
			limit--
		}
		s = s[:limit] + "…"
	}
	return s
}

// maxReason bounds the outside text in a sign-in's error (bytes).
const maxReason = 300
