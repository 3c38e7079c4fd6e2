package mcp

// Sign-in to remote servers (MCP authorization: OAuth 2.1 with PKCE).
//
// mcp-go does the protocol: discovery of the protected resource's metadata
// (RFC 9728, from the 401's WWW-Authenticate or the well-known URL) and of
// the authorization server's (RFC 8414), dynamic client registration
// (RFC 7591), the authorization URL with an S256 PKCE challenge, the code
// exchange and the refresh of an expired token. This file keeps what it
// cannot: where a sign-in lives (the OS keychain, through Secrets, one entry
// per server name and URL), which dials use it, and which failures mean
// "sign in" (StateNeedsAuth). oauth_login.go owns the loopback callback.
//
// A sign-in never reaches SQLite, a log line or an event: the keychain
// entry is its only copy outside memory, and errors name servers, never
// tokens.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// StateNeedsAuth: an http or sse server answered 401 with an OAuth
// challenge (WWW-Authenticate with RFC 9728 resource_metadata), or its
// stored sign-in no longer works (refused, or expired with no refresh):
// Login signs in. It is a state of Status, like StateFailed.
const StateNeedsAuth = "needs_auth"

// Sentinels of sign-in; callers match them with errors.Is.
var (
	// ErrNotRemote: Login or Logout of a stdio or builtin server.
	ErrNotRemote = errors.New("MCP server has no sign-in (only http and sse servers sign in)")
	// ErrStaticAuth: Login of a server whose config sends its own
	// Authorization header.
	ErrStaticAuth = errors.New("MCP server config sets its own Authorization header")
	// ErrNoSecrets: the manager has no keychain (Options.Secrets) to keep a
	// sign-in in.
	ErrNoSecrets = errors.New("no keychain to keep MCP sign-ins in")
	// ErrNoSignIn: Secrets has no sign-in for that server (what Get and
	// Delete wrap when the keychain has no entry).
	ErrNoSignIn = errors.New("no MCP sign-in stored")
	// ErrLoginFailed: a sign-in could not start (discovery, registration)
	// or did not finish (refused consent, wrong answer, token exchange,
	// timeout).
	ErrLoginFailed = errors.New("MCP sign-in failed")
	// ErrCallbackPort: the loopback callback could not listen on the
	// configured oauth.callbackPort.
	ErrCallbackPort = errors.New("MCP sign-in callback port unavailable")
)

// Secrets keeps sign-ins in the OS keychain: one value per account. Get and
// Delete return an error wrapping ErrNoSignIn when the account has none.
// The backend adapts keychain.Keyring to it.
type Secrets interface {
	Get(ctx context.Context, account string) (string, error)
	Set(ctx context.Context, account, value string) error
	Delete(ctx context.Context, account string) error
}

// OAuthSettings are a server entry's optional "oauth" object in mcp.json:
//
//	"oauth": {"clientId": "…", "clientSecret": "${SECRET}", "scopes": ["read"], "callbackPort": 33418}
//
// ClientID is a client registered with the authorization server beforehand;
// without it the sidecar registers one itself (RFC 7591) when the server
// offers registration. CallbackPort fixes the loopback callback's port (the
// redirect URI is then http://127.0.0.1:<port>/callback, what a
// pre-registered client names); 0 is a random free port. clientId and
// clientSecret may use ${VAR}, expanded like the rest of a trusted config.
// The object is part of the config's trust hash.
type OAuthSettings struct {
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	CallbackPort int      `json:"callbackPort,omitempty"`
}

// oauthKeys are the fields of the "oauth" object.
var oauthKeys = []string{"clientId", "clientSecret", "scopes", "callbackPort"}

// oauthField is the entry key of OAuthSettings (kept in Extra, so a save
// writes it back as written).
const oauthField = "oauth"

// OAuth returns c's "oauth" object, decoded strictly (zero when absent).
// ${VAR} references are left as written.
func (c ServerConfig) OAuth() (OAuthSettings, error) {
	raw, ok := c.Extra[oauthField]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return OAuthSettings{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return OAuthSettings{}, fmt.Errorf("%w: server %q: oauth: must be an object", ErrInvalidConfig, c.Name)
	}
	for k := range fields {
		if !slices.Contains(oauthKeys, k) { // exact names: no case variants
			return OAuthSettings{}, fmt.Errorf("%w: server %q: oauth: unknown field %q (known: %s)", ErrInvalidConfig, c.Name, k, strings.Join(oauthKeys, ", "))
		}
	}
	var s OAuthSettings
	if err := json.Unmarshal(raw, &s); err != nil {
		return OAuthSettings{}, fmt.Errorf("%w: server %q: oauth: %v", ErrInvalidConfig, c.Name, err)
	}
	if c.Type != TypeHTTP && c.Type != TypeSSE {
		return OAuthSettings{}, fmt.Errorf("%w: server %q: oauth: only http and sse servers sign in", ErrInvalidConfig, c.Name)
	}
	if s.CallbackPort < 0 || s.CallbackPort > 65535 {
		return OAuthSettings{}, fmt.Errorf("%w: server %q: oauth.callbackPort: %d is not a port", ErrInvalidConfig, c.Name, s.CallbackPort)
	}
	return s, nil
}

// oauthHashField is c's "oauth" object as the trust hash covers it
// (compact JSON; nil when absent, so configs without one hash as before).
func (c ServerConfig) oauthHashField() json.RawMessage {
	raw, ok := c.Extra[oauthField]
	if !ok {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// expandOAuth expands the ${VAR} references of the client credentials.
func expandOAuth(s OAuthSettings, lookup func(string) (string, bool)) OAuthSettings {
	c := expandConfig(ServerConfig{Env: map[string]string{"id": s.ClientID, "secret": s.ClientSecret}}, lookup)
	s.ClientID, s.ClientSecret = c.Env["id"], c.Env["secret"]
	return s
}

// signIn is one server's keychain entry: the client its sign-in used and
// the tokens it got. It is keyed (SignInAccount) and checked by the
// server's name and URL, so a renamed server, or one pointed elsewhere,
// never sends another server's token.
type signIn struct {
	Server       string `json:"server"`
	URL          string `json:"url"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	AuthMethod   string `json:"authMethod,omitempty"`
	RedirectURI  string `json:"redirectUri,omitempty"`
	// ResourceMetadata is the RFC 9728 metadata URL the server's 401
	// named (same origin as URL), for discovery when refreshing.
	ResourceMetadata string           `json:"resourceMetadata,omitempty"`
	Token            *transport.Token `json:"token,omitempty"`
}

// MaxSignInBytes bounds a keychain entry, under every keychain's limit
// (keychain.MaxKeyBytes): a sign-in larger with its access token is kept
// without it.
const MaxSignInBytes = 2048

// SignInAccount is the keychain account of the sign-in of the server
// name at serverURL (its expanded URL).
func SignInAccount(name, serverURL string) string {
	sum := sha256.Sum256([]byte(name + "\x00" + serverURL))
	return "mcp-oauth:" + hex.EncodeToString(sum[:16])
}

// tokenStore is mcp-go's TokenStore over one keychain entry. It answers
// from memory and writes every new token through to the keychain; once
// revoked (Logout), it has no token and saves none.
type tokenStore struct {
	secrets Secrets
	account string

	mu      sync.Mutex // guards entry, revoked
	entry   signIn
	revoked bool
}

var _ transport.TokenStore = (*tokenStore)(nil)

// errSignedOut: a token arrived for a sign-in that was forgotten.
var errSignedOut = errors.New("signed out of the MCP server")

// GetToken returns the stored token, or transport.ErrNoToken. An expired
// token is looked up again first: another connection to the same server
// (another project) may have refreshed it.
func (s *tokenStore) GetToken(ctx context.Context) (*transport.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked {
		return nil, transport.ErrNoToken
	}
	if s.entry.Token != nil && s.entry.Token.IsExpired() {
		if e, err := readSignIn(ctx, s.secrets, s.account, s.entry.Server, s.entry.URL); err == nil && e.Token != nil {
			s.entry = e
		}
	}
	if s.entry.Token == nil {
		return nil, transport.ErrNoToken
	}
	t := *s.entry.Token
	return &t, nil
}

// SaveToken keeps a new token (a code exchange's or a refresh's) in the
// keychain, with the client it belongs to.
func (s *tokenStore) SaveToken(ctx context.Context, t *transport.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.revoked {
		return errSignedOut
	}
	e := s.entry
	tc := *t
	e.Token = &tc
	b, err := json.Marshal(e)
	if err == nil && len(b) > MaxSignInBytes && tc.RefreshToken != "" {
		// Too large for a keychain entry with both tokens: keep the
		// refresh token only (this process keeps both in memory); the
		// next process refreshes before its first request.
		slim, st := e, tc
		st.AccessToken, st.ExpiresAt = "", time.Unix(1, 0)
		slim.Token = &st
		b, err = json.Marshal(slim)
	}
	if err != nil {
		return fmt.Errorf("encode the sign-in of %s: %w", e.Server, err)
	}
	if err := s.secrets.Set(ctx, s.account, string(b)); err != nil {
		return fmt.Errorf("keep the sign-in of %s in the keychain: %w", e.Server, err)
	}
	s.entry = e
	return nil
}

// revoke makes the store forget its token and refuse new ones.
func (s *tokenStore) revoke() {
	s.mu.Lock()
	s.revoked = true
	s.entry.Token = nil
	s.mu.Unlock()
}

// readSignIn reads and checks a keychain entry: ErrNoSignIn when there is
// none, or when it was made for another server name or URL.
func readSignIn(ctx context.Context, secrets Secrets, account, name, serverURL string) (signIn, error) {
	v, err := secrets.Get(ctx, account)
	if err != nil {
		return signIn{}, err
	}
	var e signIn
	if err := json.Unmarshal([]byte(v), &e); err != nil {
		return signIn{}, fmt.Errorf("%w: the keychain entry of %s is not a sign-in", ErrNoSignIn, name)
	}
	if e.Server != name || e.URL != serverURL {
		return signIn{}, fmt.Errorf("%w: the keychain entry is for another server", ErrNoSignIn)
	}
	return e, nil
}

// signIns is a Manager's sign-in state.
//
// mu is a leaf lock: it may be taken under Manager.mu, and nothing that
// takes another lock or calls out (keychain, network) runs under it.
type signIns struct {
	secrets Secrets // nil: no sign-in
	timeout time.Duration

	mu       sync.Mutex
	metadata map[string]string      // guarded by mu; server → resource metadata URL of its last 401
	stores   map[string]*tokenStore // guarded by mu; server → the token store of its last dial
	logins   map[string]*login      // guarded by mu; server → its sign-in waiting for the callback
}

func newSignIns(opts Options) *signIns {
	return &signIns{
		secrets: opts.Secrets, timeout: opts.LoginTimeout,
		metadata: map[string]string{}, stores: map[string]*tokenStore{}, logins: map[string]*login{},
	}
}

// remoteAuth is how one dial of an http or sse server authenticates: with
// its stored sign-in (mcp-go then sends the token and refreshes it), or
// without, when there is none.
type remoteAuth struct {
	oauth *transport.OAuthConfig // nil: no sign-in stored
}

// authFor loads the sign-in of cfg (expanded) for a dial. Servers that
// are not remote, or send their own Authorization header, dial without.
func (d *dialer) authFor(ctx context.Context, cfg ServerConfig) *remoteAuth {
	a := &remoteAuth{}
	si := d.signIns
	if si == nil || si.secrets == nil || (cfg.Type != TypeHTTP && cfg.Type != TypeSSE) || hasAuthHeader(cfg) {
		return a
	}
	account := SignInAccount(cfg.Name, cfg.URL)
	e, err := readSignIn(ctx, si.secrets, account, cfg.Name, cfg.URL)
	if err != nil {
		if !errors.Is(err, ErrNoSignIn) {
			d.logger.Debug("mcp sign-in not readable", "server", cfg.Name, "err", err)
		}
		return a
	}
	st := &tokenStore{secrets: si.secrets, account: account, entry: e}
	si.mu.Lock()
	si.stores[cfg.Name] = st
	si.mu.Unlock()
	a.oauth = &transport.OAuthConfig{
		ClientID: e.ClientID, ClientSecret: e.ClientSecret, TokenEndpointAuthMethod: e.AuthMethod,
		RedirectURI: e.RedirectURI, TokenStore: st, PKCEEnabled: true,
		ProtectedResourceMetadataURL: e.ResourceMetadata,
	}
	return a
}

// httpOAuth is the streamable HTTP transport's option; nil when none.
func (a *remoteAuth) httpOAuth() transport.StreamableHTTPCOption {
	if a.oauth == nil {
		return nil
	}
	return transport.WithHTTPOAuth(*a.oauth)
}

// sseOAuth is the SSE transport's option; a no-op when none.
func (a *remoteAuth) sseOAuth() transport.ClientOption {
	if a.oauth == nil {
		return func(*transport.SSE) {}
	}
	return transport.WithOAuth(*a.oauth)
}

// NeedsAuthError is a dial's error when the server wants a sign-in.
type NeedsAuthError struct {
	// ResourceMetadata is the RFC 9728 metadata URL of the 401 ("" when the
	// challenge named none).
	ResourceMetadata string
	Err              error
}

func (e *NeedsAuthError) Error() string {
	return e.Err.Error() + " (sign in with mcp.login)"
}

func (e *NeedsAuthError) Unwrap() error { return e.Err }

// classify tells a dial's failure that wants a sign-in: a 401 naming its
// OAuth metadata, or a stored sign-in that no longer works. A bare 401
// stays a failure (with a hint: the server may still sign in).
func (a *remoteAuth) classify(err error) error {
	if a == nil || err == nil {
		return err
	}
	md := client.GetResourceMetadataURL(err)
	switch {
	case client.IsOAuthAuthorizationRequiredError(err), client.IsAuthorizationRequiredError(err) && md != "":
		return &NeedsAuthError{ResourceMetadata: md, Err: err}
	case client.IsAuthorizationRequiredError(err):
		return fmt.Errorf("%w (if the server signs in with OAuth: mcp.login)", err)
	}
	return err
}

// wantsSignIn reports whether a call failed because the server no longer
// accepts the connection's sign-in (or wants one).
func wantsSignIn(err error) bool {
	return client.IsOAuthAuthorizationRequiredError(err) || client.IsAuthorizationRequiredError(err)
}

// signInLost takes the connection of a server that refused its sign-in
// during a call: the server becomes needs_auth (its tools go) until Login.
func (m *Manager) signInLost(c *conn, err error) {
	m.mu.Lock()
	s, ok := m.servers[c.name]
	if !ok || s.conn != c || m.closed {
		m.mu.Unlock()
		return
	}
	s.gen++
	s.conn, s.tools, s.state, s.lastErr = nil, nil, StateNeedsAuth, (&NeedsAuthError{Err: err}).Error()
	m.syncLocked()
	m.announceLocked(s)
	m.closeLater(c) // under the lock: never after CloseAll's Wait
	m.mu.Unlock()
	m.flush()
	m.log.Warn("mcp sign-in refused", "server", c.name, "err", err)
}

// failedStateLocked is the state of a server whose connect failed with
// err; a server that wants a sign-in remembers its 401's metadata URL for
// Login. m.mu is held.
func (m *Manager) failedStateLocked(s *serverState, err error) string {
	var na *NeedsAuthError
	if !errors.As(err, &na) {
		return StateFailed
	}
	if md := na.ResourceMetadata; md != "" && sameOrigin(md, expandConfig(s.cfg, lookupVar).URL) {
		m.signIns.mu.Lock()
		m.signIns.metadata[s.cfg.Name] = md
		m.signIns.mu.Unlock()
	}
	return StateNeedsAuth
}

// sameOrigin reports whether two absolute URLs share scheme and host: a
// resource's metadata is its own (RFC 9728 §3), never another origin's.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme != "" && ua.Host != "" &&
		strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// hasAuthHeader reports whether cfg sends its own Authorization header.
func hasAuthHeader(cfg ServerConfig) bool {
	for k := range cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
