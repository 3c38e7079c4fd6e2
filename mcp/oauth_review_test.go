package mcp

import (
	"encoding/json"
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
