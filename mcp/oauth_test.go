package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/mcp/oauthtest"
	"github.com/zqagent/sidecar/tools"
)

// memSecrets is an in-memory Secrets (the backend's is the OS keychain).
type memSecrets struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memSecrets) Get(_ context.Context, account string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[account]
	if !ok {
		return "", ErrNoSignIn
	}
	return v, nil
}

func (s *memSecrets) Set(_ context.Context, account, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[account] = value
	return nil
}

func (s *memSecrets) Delete(_ context.Context, account string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[account]; !ok {
		return ErrNoSignIn
	}
	delete(s.m, account)
	return nil
}

func (s *memSecrets) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// entry returns the sign-in stored for a server.
func (s *memSecrets) entry(t *testing.T, name, serverURL string) signIn {
	t.Helper()
	v, err := s.Get(context.Background(), SignInAccount(name, serverURL))
	require.NoError(t, err)
	var e signIn
	require.NoError(t, json.Unmarshal([]byte(v), &e))
	return e
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// redirectOf is the redirect_uri an authorization URL carries.
func redirectOf(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	require.NoError(t, err)
	r := u.Query().Get("redirect_uri")
	require.NotEmpty(t, r, authURL)
	return r
}

func oauthManager(t *testing.T, cfgs []ServerConfig, opts Options) (*Manager, *memSecrets, *statusLog) {
	t.Helper()
	m, _, sec, log := oauthManagerReg(t, cfgs, opts)
	return m, sec, log
}

func oauthManagerReg(t *testing.T, cfgs []ServerConfig, opts Options) (*Manager, *tools.Registry, *memSecrets, *statusLog) {
	t.Helper()
	sec := &memSecrets{}
	opts.Secrets = sec
	m, reg, log := newTestManager(t, cfgs, opts)
	return m, reg, sec, log
}

// TestOAuthSignInEndToEnd: a server that answers 401 with RFC 9728
// metadata is needs_auth; Login's URL leads (through the authorization
// server, consent approved) to the loopback callback, where a forged
// callback with a wrong state is refused and changes nothing; the real
// one stores the tokens, and the server connects with them and serves its
// tool. The callback answers once.
func TestOAuthSignInEndToEnd(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	m, reg, sec, log := oauthManagerReg(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})

	require.Error(t, m.Connect(tctx(t), "remote"))
	st := stateOf(m, "remote")
	require.Equal(t, StateNeedsAuth, st.State, st.LastError)
	require.Contains(t, st.LastError, "mcp.login")

	authURL, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	u, err := url.Parse(authURL)
	require.NoError(t, err)
	asURL, _ := url.Parse(as.AS.URL)
	require.Equal(t, asURL.Host, u.Host, "the URL is the authorization server's, from the metadata")
	require.Equal(t, "S256", u.Query().Get("code_challenge_method"))
	require.Equal(t, 1, as.Clients(), "no client id configured: registered dynamically")
	redirect := redirectOf(t, authURL)
	require.True(t, strings.HasPrefix(redirect, "http://127.0.0.1:"), redirect)

	// A forged answer: wrong state. Refused, nothing stored, still waiting.
	code, err := oauthtest.Callback(tctx(t), redirect, url.Values{"state": {"forged"}, "code": {"x"}})
	require.NoError(t, err)
	require.Equal(t, 400, code)
	code, err = oauthtest.Callback(tctx(t), strings.Replace(redirect, "/callback", "/other", 1), url.Values{"state": {u.Query().Get("state")}})
	require.NoError(t, err)
	require.Equal(t, 404, code, "only the callback path answers")
	require.Zero(t, sec.len())
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State)

	status, body, err := oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "Signed in to remote")
	waitFor(t, "connected after sign-in", func() bool { return stateOf(m, "remote").State == StateConnected })
	require.True(t, log.has("remote", StateConnected))
	out, err := callTool(t, reg, "mcp__remote__whoami", `{}`)
	require.NoError(t, err)
	require.Equal(t, oauthtest.ToolText, out)

	e := sec.entry(t, "remote", as.URL())
	require.NotNil(t, e.Token)
	require.True(t, as.Accepted(e.Token.AccessToken))
	require.Equal(t, 1, as.Grants("authorization_code"))

	// Once: the callback is gone after its answer.
	_, err = oauthtest.Callback(tctx(t), redirect, url.Values{"state": {u.Query().Get("state")}, "code": {"again"}})
	require.Error(t, err, "the callback port is closed after the sign-in")
}

// TestOAuthSignInSSE: an SSE server signs in the same way.
func TestOAuthSignInSSE(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{SSE: true})
	defer as.Close()
	m, reg, _, _ := oauthManagerReg(t, []ServerConfig{{Name: "events", Type: TypeSSE, URL: as.URL(), Enabled: true}}, Options{})
	require.Error(t, m.Connect(tctx(t), "events"))
	require.Equal(t, StateNeedsAuth, stateOf(m, "events").State, stateOf(m, "events").LastError)
	signInThrough(t, m, "events")
	out, err := callTool(t, reg, "mcp__events__whoami", `{}`)
	require.NoError(t, err)
	require.Equal(t, oauthtest.ToolText, out)
	require.NoError(t, m.CloseAll()) // before the SSE server waits for its stream
}

// TestOAuthRefusedConsent: the user refuses (error=access_denied): the
// sign-in ends with that reason, nothing is stored, the server stays
// needs_auth.
func TestOAuthRefusedConsent(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	as.Deny.Store(true)
	m, sec, _ := oauthManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))

	authURL, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	status, body, err := oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, 400, status)
	require.Contains(t, body, "access_denied")
	waitFor(t, "the refusal reported", func() bool { return strings.Contains(stateOf(m, "remote").LastError, "access_denied") })
	st := stateOf(m, "remote")
	require.Equal(t, StateNeedsAuth, st.State)
	require.Contains(t, st.LastError, "refused the sign-in")
	require.Zero(t, sec.len())
	require.Zero(t, as.Grants("authorization_code"))
}

// signIn signs m in to the server name through a browser.
func signInThrough(t *testing.T, m *Manager, name string) {
	t.Helper()
	authURL, err := m.Login(tctx(t), name)
	require.NoError(t, err)
	status, body, err := oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, 200, status, body)
	waitFor(t, name+" connected", func() bool { return stateOf(m, name).State == StateConnected })
}

// TestOAuthExpiredTokenRefreshed: a stored token that expired is refreshed
// with its refresh token before the server is contacted (the old access
// token is no longer accepted), and the new tokens replace the old ones in
// the keychain.
func TestOAuthExpiredTokenRefreshed(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	m, sec, _ := oauthManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))
	signInThrough(t, m, "remote")
	old := sec.entry(t, "remote", as.URL())

	// The token's lifetime ends: the resource refuses it and the stored
	// copy says it expired.
	as.ExpireAccessTokens()
	expired := old
	tok := *old.Token
	tok.ExpiresAt = time.Now().Add(-time.Minute)
	expired.Token = &tok
	b, err := json.Marshal(expired)
	require.NoError(t, err)
	require.NoError(t, sec.Set(context.Background(), SignInAccount("remote", as.URL()), string(b)))

	require.NoError(t, m.Refresh(tctx(t), "remote"))
	require.Equal(t, StateConnected, stateOf(m, "remote").State)
	require.Equal(t, 1, as.Grants("refresh_token"))
	now := sec.entry(t, "remote", as.URL())
	require.NotEqual(t, old.Token.AccessToken, now.Token.AccessToken)
	require.NotEqual(t, old.Token.RefreshToken, now.Token.RefreshToken, "refresh tokens rotate")
	require.True(t, as.Accepted(now.Token.AccessToken))
}

// TestOAuthRevokedMidSession: a server that stops accepting the token
// during a session makes the call fail as "sign in again" and the server
// needs_auth (its tools withdrawn), not a dead server.
func TestOAuthRevokedMidSession(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	m, reg, _, log := oauthManagerReg(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))
	signInThrough(t, m, "remote")
	as.ExpireAccessTokens() // the server refuses the token; this side thinks it is good
	_, err := callTool(t, reg, "mcp__remote__whoami", `{}`)
	require.ErrorContains(t, err, "mcp.login")
	st := stateOf(m, "remote")
	require.Equal(t, StateNeedsAuth, st.State)
	require.True(t, log.has("remote", StateNeedsAuth))
	_, ok := reg.Lookup("mcp__remote__whoami")
	require.False(t, ok, "the tools of a server that wants a sign-in are withdrawn")
}

// TestOAuthLogout: the sign-in is forgotten (keychain entry removed) and
// the server is needs_auth again.
func TestOAuthLogout(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	m, sec, _ := oauthManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))
	signInThrough(t, m, "remote")
	require.Equal(t, 1, sec.len())

	require.NoError(t, m.Logout(tctx(t), "remote"))
	require.Zero(t, sec.len())
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State)
	require.NoError(t, m.Logout(tctx(t), "remote"), "logging out twice is not an error")
}

// TestOAuthTokenBoundToNameAndURL: a sign-in serves only the server name
// and URL it was made for: another name at the same URL, or the same name
// pointed at another server, is not sent the token.
func TestOAuthTokenBoundToNameAndURL(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	other := oauthtest.New(oauthtest.Options{})
	defer other.Close()
	m, sec, _ := oauthManager(t, []ServerConfig{
		{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true},
		{Name: "twin", Type: TypeHTTP, URL: as.URL(), Enabled: true},
	}, Options{})
	m.ConnectAll(tctx(t))
	signInThrough(t, m, "remote")
	require.Error(t, m.Refresh(tctx(t), "twin"))
	require.Equal(t, StateNeedsAuth, stateOf(m, "twin").State)

	// The same name, pointed elsewhere: the old sign-in is not sent.
	require.NoError(t, m.UpdateConfig(tctx(t), "remote", ServerConfig{Name: "remote", Type: TypeHTTP, URL: other.URL(), Enabled: true}))
	require.Error(t, m.Refresh(tctx(t), "remote"))
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State)
	for _, tok := range as.Issued() {
		require.False(t, other.Accepted(tok))
	}
	require.Equal(t, 1, sec.len())

	// A keychain entry made for another server is not used even under this
	// server's account.
	sec.mu.Lock()
	for k, v := range sec.m {
		sec.m[SignInAccount("remote", other.URL())] = v
		delete(sec.m, k)
	}
	sec.mu.Unlock()
	require.Error(t, m.Refresh(tctx(t), "remote"))
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State)
}

// TestOAuthPreregisteredClientFixedPort: with oauth.clientId and
// oauth.callbackPort the sidecar registers nothing and redirects to
// exactly http://127.0.0.1:<port>/callback, what the client was
// registered with; a second Login frees the port of the first and takes
// it over.
func TestOAuthPreregisteredClientFixedPort(t *testing.T) {
	port := freePort(t)
	redirect := "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
	as := oauthtest.New(oauthtest.Options{NoRegistration: true, ClientID: "pre-registered", RedirectURIs: []string{redirect}})
	defer as.Close()
	cfg := ServerConfig{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true,
		Extra: map[string]json.RawMessage{"oauth": json.RawMessage(`{"clientId":"pre-registered","callbackPort":` + strconv.Itoa(port) + `}`)}}
	m, sec, _ := oauthManager(t, []ServerConfig{cfg}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))
	first, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	// A second sign-in replaces the first on the same fixed port; the
	// first URL's answer no longer matches.
	authURL, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	require.Equal(t, redirect, redirectOf(t, authURL))
	require.Zero(t, as.Clients())
	status, _, err := oauthtest.Browse(tctx(t), first)
	require.NoError(t, err)
	require.Equal(t, 400, status, "the replaced sign-in's state is refused")
	status, body, err := oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, 200, status, body)
	waitFor(t, "connected", func() bool { return stateOf(m, "remote").State == StateConnected })
	require.Equal(t, "pre-registered", sec.entry(t, "remote", as.URL()).ClientID)
}

// TestOAuthNoRegistrationNoClientID: without registration and without a
// configured client id, Login says where to set one.
func TestOAuthNoRegistrationNoClientID(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{NoRegistration: true})
	defer as.Close()
	m, _, _ := oauthManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))
	_, err := m.Login(tctx(t), "remote")
	require.ErrorIs(t, err, ErrLoginFailed)
	require.Contains(t, err.Error(), "oauth.clientId")
}

// TestOAuthLoginTimeoutFreesPort: a sign-in nobody completes ends after
// the timeout, says so in the status, and frees its port.
func TestOAuthLoginTimeoutFreesPort(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	port := freePort(t)
	cfg := ServerConfig{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true,
		Extra: map[string]json.RawMessage{"oauth": json.RawMessage(`{"callbackPort":` + strconv.Itoa(port) + `}`)}}
	m, _, _ := oauthManager(t, []ServerConfig{cfg}, Options{LoginTimeout: 200 * time.Millisecond})
	require.Error(t, m.Connect(tctx(t), "remote"))
	_, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	waitFor(t, "the timeout reported", func() bool { return strings.Contains(stateOf(m, "remote").LastError, "did not come back") })
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State)
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err, "the callback port is free again")
	ln.Close()
}

// TestOAuthLoginRefusals: only remote, enabled, trusted servers without
// their own Authorization header sign in, and only with a keychain.
func TestOAuthLoginRefusals(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	m, _, _ := oauthManager(t, []ServerConfig{
		stdioConfig(t, "local"),
		{Name: "keyed", Type: TypeHTTP, URL: as.URL(), Headers: map[string]string{"authorization": "Bearer k"}, Enabled: true},
		{Name: "off", Type: TypeHTTP, URL: as.URL()},
	}, Options{})
	_, err := m.Login(tctx(t), "local")
	require.ErrorIs(t, err, ErrNotRemote)
	_, err = m.Login(tctx(t), "keyed")
	require.ErrorIs(t, err, ErrStaticAuth)
	_, err = m.Login(tctx(t), "off")
	require.ErrorIs(t, err, ErrDisabled)
	_, err = m.Login(tctx(t), "nope")
	require.ErrorIs(t, err, ErrUnknownServer)
	require.ErrorIs(t, m.Logout(tctx(t), "local"), ErrNotRemote)

	noKeychain, _, _ := newTestManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	_, err = noKeychain.Login(tctx(t), "remote")
	require.ErrorIs(t, err, ErrNoSecrets)

	untrusted, _, _ := newTestManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{Trust: &memTrust{}, Secrets: &memSecrets{}})
	_, err = untrusted.Login(tctx(t), "remote")
	require.ErrorIs(t, err, ErrUntrusted)
}

// TestOAuthConfigField: the oauth object is decoded strictly, belongs to
// remote servers and is covered by the trust hash.
func TestOAuthConfigField(t *testing.T) {
	c, _, err := ParseServer([]byte(`{"name":"r","url":"https://x.example/mcp","oauth":{"clientId":"id","scopes":["a"],"callbackPort":8765}}`), "")
	require.NoError(t, err)
	s, err := c.OAuth()
	require.NoError(t, err)
	require.Equal(t, OAuthSettings{ClientID: "id", Scopes: []string{"a"}, CallbackPort: 8765}, s)
	plain, _, err := ParseServer([]byte(`{"name":"r","url":"https://x.example/mcp"}`), "")
	require.NoError(t, err)
	require.NotEqual(t, plain.Hash(), c.Hash(), "the oauth object is part of what the user trusts")

	for _, bad := range []string{
		`{"name":"r","url":"https://x.example/mcp","oauth":{"clientID":"typo"}}`,
		`{"name":"r","url":"https://x.example/mcp","oauth":{"callbackPort":70000}}`,
		`{"name":"r","command":"srv","oauth":{}}`,
	} {
		_, _, err := ParseServer([]byte(bad), "")
		require.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

// TestTokenStoreRevoked: after Logout's revoke a store has no token and
// keeps none (a refresh that lands late does not sign back in).
func TestTokenStoreRevoked(t *testing.T) {
	sec := &memSecrets{}
	st := &tokenStore{secrets: sec, account: "a", entry: signIn{Server: "s", URL: "u"}}
	require.NoError(t, st.SaveToken(context.Background(), &transport.Token{AccessToken: "t"}))
	got, err := st.GetToken(context.Background())
	require.NoError(t, err)
	require.Equal(t, "t", got.AccessToken)
	st.revoke()
	_, err = st.GetToken(context.Background())
	require.ErrorIs(t, err, transport.ErrNoToken)
	require.True(t, errors.Is(st.SaveToken(context.Background(), &transport.Token{AccessToken: "late"}), errSignedOut))
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestTokenStoreLargeToken: a sign-in too large for a keychain entry is
// kept without its access token (the refresh token gets a new one), while
// this process goes on using the token it has.
func TestTokenStoreLargeToken(t *testing.T) {
	sec := &memSecrets{}
	st := &tokenStore{secrets: sec, account: "a", entry: signIn{Server: "s", URL: "u"}}
	big := strings.Repeat("x", MaxSignInBytes)
	require.NoError(t, st.SaveToken(context.Background(), &transport.Token{AccessToken: big, RefreshToken: "r", ExpiresAt: time.Now().Add(time.Hour)}))
	got, err := st.GetToken(context.Background())
	require.NoError(t, err)
	require.Equal(t, big, got.AccessToken)
	stored := sec.m["a"]
	require.LessOrEqual(t, len(stored), MaxSignInBytes)
	var e signIn
	require.NoError(t, json.Unmarshal([]byte(stored), &e))
	require.Empty(t, e.Token.AccessToken)
	require.Equal(t, "r", e.Token.RefreshToken)
	require.True(t, e.Token.IsExpired())
}
