package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

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
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				authz, tok := tc.authz, tc.tok
				if authz == "" {
					authz, tok = srv.URL+"/authorize", srv.URL+"/token"
				}
				switch r.URL.Path {
				case "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
					_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{srv.URL}})
				case "/.well-known/oauth-authorization-server":
					_ = json.NewEncoder(w).Encode(map[string]any{
						"issuer": srv.URL, "authorization_endpoint": authz, "token_endpoint": tok,
						"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
					})
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			cfg := ServerConfig{Name: "remote", Type: TypeHTTP, URL: srv.URL + "/mcp", Enabled: true,
				Extra: map[string]json.RawMessage{"oauth": json.RawMessage(`{"clientId":"pre-registered"}`)}}
			m, sec, _ := oauthManager(t, []ServerConfig{cfg}, Options{})
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

func TestCheckEndpoint(t *testing.T) {
	for _, ok := range []string{"https://a.example/x", "HTTPS://a.example", "http://127.0.0.1:8/t", "http://localhost/t", "http://[::1]:9/t"} {
		require.NoError(t, checkEndpoint("e", ok), ok)
	}
	for _, bad := range []string{"http://a.example/t", "http://127.0.0.1.nip.io/t", "javascript:alert(1)", "file:///etc/passwd", "https:///x", "https://u:p@a.example/", "ftp://a.example/", "/relative"} {
		require.Error(t, checkEndpoint("e", bad), bad)
	}
}
