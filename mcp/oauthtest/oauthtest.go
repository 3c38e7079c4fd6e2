// Package oauthtest is, for tests, an OAuth 2.1 authorization server and an
// MCP server it protects, over httptest: RFC 8414 metadata, RFC 7591
// dynamic registration, authorization codes bound to a PKCE S256 challenge
// and a redirect URI (exchanged once), refresh tokens that rotate, access
// tokens that expire, and a consent that is approved at once or refused
// (error=access_denied). The MCP server (mcp-go over streamable HTTP)
// answers 401 with an RFC 9728 challenge to any request without a valid
// access token.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ToolText is what the protected server's "whoami" tool answers.
const ToolText = "hello from the protected server"

// Options shape a Server.
type Options struct {
	// AccessTTL is an access token's lifetime (default one hour).
	AccessTTL time.Duration
	// NoRegistration turns dynamic registration off.
	NoRegistration bool
	// ClientID is a pre-registered public client; RedirectURIs are its
	// allowed redirect URIs.
	ClientID     string
	RedirectURIs []string
	// SSE serves the MCP server over the SSE transport (/sse) instead of
	// streamable HTTP (/mcp).
	SSE bool
}

// Server is an authorization server (AS) and the MCP server it protects
// (Resource), each an httptest server.
type Server struct {
	AS       *httptest.Server
	Resource *httptest.Server
	opts     Options

	// Deny makes the consent refuse (error=access_denied).
	Deny atomic.Bool

	mu       sync.Mutex
	clients  map[string][]string  // client id → redirect URIs
	codes    map[string]codeGrant // unused authorization codes
	access   map[string]time.Time // access token → expiry
	refresh  map[string]string    // live refresh token → client id
	issued   []string             // every token issued
	grants   map[string]int       // grant type → successful token requests
	seen     map[string]bool      // access tokens the resource accepted
	shutdown func(context.Context) error
}

type codeGrant struct {
	client, redirect, challenge string
}

// New starts both servers; Close stops them.
func New(opts Options) *Server {
	if opts.AccessTTL <= 0 {
		opts.AccessTTL = time.Hour
	}
	s := &Server{
		opts: opts, clients: map[string][]string{}, codes: map[string]codeGrant{},
		access: map[string]time.Time{}, refresh: map[string]string{}, grants: map[string]int{}, seen: map[string]bool{},
	}
	if opts.ClientID != "" {
		s.clients[opts.ClientID] = opts.RedirectURIs
	}
	as := http.NewServeMux()
	as.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	as.HandleFunc("POST /register", s.register)
	as.HandleFunc("GET /authorize", s.authorize)
	as.HandleFunc("POST /token", s.token)
	s.AS = httptest.NewServer(as)

	ms := server.NewMCPServer("protected", "1.0.0", server.WithToolCapabilities(false))
	ms.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Say who answers.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(ToolText), nil
		})
	rs := http.NewServeMux()
	rs.HandleFunc("GET /.well-known/oauth-protected-resource"+s.path(), s.resourceMetadata)
	rs.HandleFunc("GET /.well-known/oauth-protected-resource", s.resourceMetadata)
	if opts.SSE {
		sse := server.NewSSEServer(ms)
		s.shutdown = sse.Shutdown
		rs.Handle("/sse", s.bearer(sse))
		rs.Handle("/message", s.bearer(sse))
		s.Resource = httptest.NewServer(rs)
		server.WithBaseURL(s.Resource.URL)(sse)
		return s
	}
	h := server.NewStreamableHTTPServer(ms)
	s.shutdown = h.Shutdown
	rs.Handle("/mcp", s.bearer(h))
	s.Resource = httptest.NewServer(rs)
	return s
}

// path is the MCP endpoint's path.
func (s *Server) path() string {
	if s.opts.SSE {
		return "/sse"
	}
	return "/mcp"
}

// Close stops both servers.
func (s *Server) Close() {
	s.Resource.CloseClientConnections()
	s.Resource.Close()
	_ = s.shutdown(context.Background())
	s.AS.CloseClientConnections()
	s.AS.Close()
}

// URL is the MCP server's URL.
func (s *Server) URL() string { return s.Resource.URL + s.path() }

// Issued returns every token issued (access and refresh).
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

// Grants returns how many token requests of a grant type succeeded
// ("authorization_code", "refresh_token").
func (s *Server) Grants(grant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[grant]
}

// Clients returns how many clients registered dynamically.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.clients)
	if s.opts.ClientID != "" {
		n--
	}
	return n
}

// ExpireAccessTokens makes every access token issued so far invalid at the
// resource (as if its lifetime ended).
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.access {
		s.access[t] = time.Time{}
	}
}

// Accepted reports whether the resource accepted token.
func (s *Server) Accepted(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[token]
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	md := map[string]any{
		"issuer":                                s.AS.URL,
		"authorization_endpoint":                s.AS.URL + "/authorize",
		"token_endpoint":                        s.AS.URL + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
	}
	if !s.opts.NoRegistration {
		md["registration_endpoint"] = s.AS.URL + "/register"
	}
	writeJSON(w, http.StatusOK, md)
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"resource": s.URL(), "authorization_servers": []string{s.AS.URL}})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if s.opts.NoRegistration {
		http.NotFound(w, r)
		return
	}
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "client-" + random()
	s.mu.Lock()
	s.clients[id] = req.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize checks the request and consents at once: a redirect to the
// client's redirect URI with a code, or with error=access_denied when Deny.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	uris, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if !known || !slices.Contains(uris, redirect) {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	back, err := url.Parse(redirect)
	if err != nil {
		http.Error(w, "bad redirect URI", http.StatusBadRequest)
		return
	}
	v := url.Values{"state": {q.Get("state")}}
	switch {
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		v.Set("error", "invalid_request")
		v.Set("error_description", "PKCE S256 is required")
	case s.Deny.Load():
		v.Set("error", "access_denied")
		v.Set("error_description", "the user refused")
	default:
		code := random()
		s.mu.Lock()
		s.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
		s.mu.Unlock()
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	grant := f.Get("grant_type")
	s.mu.Lock()
	defer s.mu.Unlock()
	var client string
	switch grant {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // a code is good once
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok, g.client != f.Get("client_id"), g.redirect != f.Get("redirect_uri"):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verification failed"})
			return
		}
		client = g.client
	case "refresh_token":
		c, ok := s.refresh[f.Get("refresh_token")]
		if !ok || c != f.Get("client_id") {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		client = c
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := "at-"+random(), "rt-"+random()
	s.access[at] = time.Now().Add(s.opts.AccessTTL)
	s.refresh[rt] = client
	s.issued = append(s.issued, at, rt)
	s.grants[grant]++
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(s.opts.AccessTTL / time.Second),
	})
}

// bearer lets requests with a live access token through; others get 401
// with the RFC 9728 challenge.
func (s *Server) bearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := cutBearer(r.Header.Get("Authorization"))
		s.mu.Lock()
		exp, known := s.access[tok]
		valid := ok && known && time.Now().Before(exp)
		if valid {
			s.seen[tok] = true
		}
		s.mu.Unlock()
		if !valid {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.Resource.URL+`/.well-known/oauth-protected-resource`+s.path()+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func cutBearer(h string) (string, bool) {
	if len(h) > 7 && (h[:7] == "Bearer " || h[:7] == "bearer ") {
		return h[7:], true
	}
	return "", false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func random() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Browse follows an authorization URL as a browser would (redirects
// included, to the sidecar's loopback callback) and returns the last
// response's status and body.
func Browse(ctx context.Context, authURL string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Callback sends a browser's answer to a redirect URI directly (a forged or
// replayed callback) and returns its status.
func Callback(ctx context.Context, redirectURI string, query url.Values) (int, error) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return 0, err
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
