package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/mcp/oauthtest"
)

// fakeAS is one httptest server that is an MCP server wanting a sign-in
// (401 with RFC 9728 metadata on /mcp) and its authorization server, whose
// metadata names authz and token (its own /authorize and /token when
// empty). /authorize redirects straight back with a code; token answers
// /token.
func fakeAS(t *testing.T, authz, tok string, token http.HandlerFunc) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authz, tok := authz, tok
		if authz == "" {
			authz, tok = srv.URL+"/authorize", srv.URL+"/token"
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/mcp":
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		case "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
		case "/.well-known/oauth-authorization-server":
			_ = json.NewEncoder(w).Encode(map[string]any{
				"issuer": srv.URL, "authorization_endpoint": authz, "token_endpoint": tok,
				"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			})
		case "/authorize":
			q := r.URL.Query()
			back, _ := url.Parse(q.Get("redirect_uri"))
			back.RawQuery = url.Values{"code": {"c0de"}, "state": {q.Get("state")}}.Encode()
			http.Redirect(w, r, back.String(), http.StatusFound)
		case "/token":
			token(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// preregistered is a config of the fake server with a client id (no
// registration).
func preregistered(srv *httptest.Server) ServerConfig {
	return ServerConfig{Name: "remote", Type: TypeHTTP, URL: srv.URL + "/mcp", Enabled: true,
		Extra: map[string]json.RawMessage{"oauth": json.RawMessage(`{"clientId":"pre-registered"}`)}}
}

// TestOAuthLoginRefusesCleartextEndpoints: an authorization server whose
// metadata names an http endpoint on a non-loopback host is refused before
// anything is sent to it or a URL is handed to the browser; the same
// metadata with the endpoints on loopback signs in as usual.
func TestOAuthLoginRefusesCleartextEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name       string
		authz, tok string
		refused    string
	}{
		{"token over http", "https://auth.example/authorize", "http://auth.example/token", "token_endpoint"},
		{"authorize over http", "http://auth.example/authorize", "https://auth.example/token", "authorization_endpoint"},
		{"loopback http", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeAS(t, tc.authz, tc.tok, http.NotFound)
			m, sec, _ := oauthManager(t, []ServerConfig{preregistered(srv)}, Options{})
			authURL, err := m.Login(tctx(t), "remote")
			if tc.refused == "" {
				require.NoError(t, err)
				require.NoError(t, m.Logout(tctx(t), "remote"))
				return
			}
			require.ErrorIs(t, err, ErrLoginFailed, "got URL %q", authURL)
			require.ErrorContains(t, err, tc.refused)
			require.Empty(t, authURL)
			require.Zero(t, sec.len())
		})
	}
}

// TestOAuthExchangeErrorIsClipped: a token endpoint that fails with a huge
// body full of terminal escapes does not put it in the server's lastError
// (mcp.status, mcp.list, the log): the reason is clipped and printable.
func TestOAuthExchangeErrorIsClipped(t *testing.T) {
	srv := fakeAS(t, "", "", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, strings.Repeat("\x1b[2J\x1b]0;owned\x07<p>oops</p>\n", 64<<10))
	})
	m, sec, _ := oauthManager(t, []ServerConfig{preregistered(srv)}, Options{})
	require.Error(t, m.Connect(tctx(t), "remote"))
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State, stateOf(m, "remote").LastError)
	authURL, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	status, body, err := oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, status)
	require.Less(t, len(body), 4096, "the browser's page is clipped too")
	waitFor(t, "the sign-in's failure in the status", func() bool {
		return strings.Contains(stateOf(m, "remote").LastError, "code exchange")
	})
	last := stateOf(m, "remote").LastError
	require.Equal(t, StateNeedsAuth, stateOf(m, "remote").State)
	require.Less(t, len(last), 2048, "lastError is clipped")
	require.NotContains(t, last, "\x1b")
	require.NotContains(t, last, "\x07")
	require.Zero(t, sec.len())
}

func TestCheckEndpoint(t *testing.T) {
	for _, ok := range []string{"https://a.example/x", "HTTPS://a.example", "http://127.0.0.1:8/t", "http://localhost/t", "http://[::1]:9/t"} {
		require.NoError(t, checkEndpoint("e", ok), ok)
	}
	for _, bad := range []string{"http://a.example/t", "http://127.0.0.1.nip.io/t", "javascript:alert(1)", "file:///etc/passwd", "https:///x", "https://u:p@a.example/", "ftp://a.example/", "/relative"} {
		require.Error(t, checkEndpoint("e", bad), bad)
	}
}

// TestOAuthCallbackRefusesForeignRequests: the loopback callback answers
// only a GET of its path with its own Host: a DNS-rebinding request (the
// right state, another Host), a POST and a huge query change nothing, and
// the real answer still signs in.
func TestOAuthCallbackRefusesForeignRequests(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	m, sec, _ := oauthManager(t, []ServerConfig{{Name: "remote", Type: TypeHTTP, URL: as.URL(), Enabled: true}}, Options{})
	authURL, err := m.Login(tctx(t), "remote")
	require.NoError(t, err)
	au, err := url.Parse(authURL)
	require.NoError(t, err)
	state := au.Query().Get("state")
	redirect := redirectOf(t, authURL)
	cb, err := url.Parse(redirect)
	require.NoError(t, err)
	cb.RawQuery = url.Values{"state": {state}, "code": {"forged"}}.Encode()

	do := func(method, host, target string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(tctx(t), method, target, nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, do(http.MethodGet, "evil.example:"+cb.Port(), cb.String()), "a rebound name")
	require.Equal(t, http.StatusForbidden, do(http.MethodGet, "127.0.0.1.evil.example:"+cb.Port(), cb.String()))
	require.Equal(t, http.StatusMethodNotAllowed, do(http.MethodPost, "", cb.String()))
	huge := *cb
	huge.RawQuery = cb.RawQuery + "&pad=" + strings.Repeat("A", 2<<20)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, do(http.MethodGet, "", huge.String()))
	require.Zero(t, sec.len())

	status, body, err := oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
	waitFor(t, "connected after sign-in", func() bool { return stateOf(m, "remote").State == StateConnected })
}

// TestOAuthTwoSignInsAtOnce: sign-ins of two servers run side by side,
// each on its own callback; neither's answer is taken by the other.
func TestOAuthTwoSignInsAtOnce(t *testing.T) {
	a, b := oauthtest.New(oauthtest.Options{}), oauthtest.New(oauthtest.Options{})
	defer a.Close()
	defer b.Close()
	m, sec, _ := oauthManager(t, []ServerConfig{
		{Name: "a", Type: TypeHTTP, URL: a.URL(), Enabled: true},
		{Name: "b", Type: TypeHTTP, URL: b.URL(), Enabled: true},
	}, Options{})
	urlA, err := m.Login(tctx(t), "a")
	require.NoError(t, err)
	urlB, err := m.Login(tctx(t), "b")
	require.NoError(t, err)
	require.NotEqual(t, redirectOf(t, urlA), redirectOf(t, urlB))
	// A's state at B's callback is refused there.
	ua, _ := url.Parse(urlA)
	code, err := oauthtest.Callback(tctx(t), redirectOf(t, urlB), url.Values{"state": {ua.Query().Get("state")}, "code": {"x"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, code)

	errs := make(chan error, 2)
	for _, u := range []string{urlA, urlB} {
		go func() {
			status, body, err := oauthtest.Browse(tctx(t), u)
			if err == nil && status != http.StatusOK {
				err = errors.New(body)
			}
			errs <- err
		}()
	}
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	waitFor(t, "both connected", func() bool {
		return stateOf(m, "a").State == StateConnected && stateOf(m, "b").State == StateConnected
	})
	require.True(t, a.Accepted(sec.entry(t, "a", a.URL()).Token.AccessToken))
	require.True(t, b.Accepted(sec.entry(t, "b", b.URL()).Token.AccessToken))
}
