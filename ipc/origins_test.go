package ipc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/store"
)

func TestExpandOrigins(t *testing.T) {
	got, err := ExpandOrigins([]string{"electron", "TAURI", "http://localhost:5173/", "myapp://*", "file://"})
	require.NoError(t, err)
	require.Equal(t, []string{"app://*", "file://", "http://localhost:5173", "http://tauri.localhost", "https://tauri.localhost", "myapp://*", "tauri://localhost"}, got)

	for _, bad := range []string{"", "null", "http://*", "https://*", "localhost:5173", "http://x.example/path", "http://user@x.example", "://x", "http://x.example?q=1"} {
		_, err := ExpandOrigins([]string{bad})
		require.ErrorIs(t, err, ErrBadOrigin, "%q", bad)
	}
	_, err = ExpandOrigins([]string{"null"})
	require.ErrorContains(t, err, "--allow-origin electron", "null's error tells an Electron developer what to pass")
}

// serverWithOrigins builds a server (not serving) with these allowed origins.
func serverWithOrigins(t *testing.T, origins ...string) *Server {
	t.Helper()
	ts := startServer(t, func(o *Options) { o.AllowOrigins = origins })
	return ts.srv
}

func TestOriginAllowed(t *testing.T) {
	s := serverWithOrigins(t, "electron", "tauri", "http://localhost:5173", "https://127.0.0.1:8443")
	cases := []struct {
		origin string
		ok     bool
	}{
		{"file://", true},
		{"FILE://", true},
		{"app://-", true},
		{"app://localhost", true},
		{"app://", false}, // no host
		{"tauri://localhost", true},
		{"http://tauri.localhost", true},
		{"https://tauri.localhost", true},
		{"http://localhost:5173", true},
		{"http://127.0.0.1:5173", true}, // the same dev server under another loopback name
		{"http://[::1]:5173", true},
		{"http://LOCALHOST:5173/", true},
		{"http://localhost:5174", false}, // another port is another program
		{"https://localhost:5173", false},
		{"https://localhost:8443", true},
		{"http://127.0.0.1:8443", false},
		{"null", false},
		{"https://evil.example", false},
		{"http://localhost.evil.example:5173", false},
		{"http://127.0.0.1.nip.io:5173", false},
		{"tauri://evil", false},
		{"appx://-", false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.ok, s.originAllowed(tc.origin), "%q", tc.origin)
	}
	require.False(t, serverWithOrigins(t).originAllowed("file://"), "no preset: file:// is refused")
}

// syncBuffer is a bytes.Buffer safe for the server's and the test's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Each refused upgrade is one JSON line with the reason and a hint, and
// never the token.
func TestRefusalIsOneJSONLine(t *testing.T) {
	var buf syncBuffer
	ts := startServer(t, func(o *Options) { o.SecurityLog = &buf; o.AllowOrigins = []string{"electron"} })
	resp := upgradeRequest(t, ts, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") })
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp = upgradeRequest(t, ts, func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong-"+ts.token) })
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp = upgradeRequest(t, ts, func(r *http.Request) { r.Header.Set("Origin", "file://") })
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode, "the electron preset lets a file:// renderer in")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, buf.String())
	var recs []map[string]any
	for _, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		recs = append(recs, m)
		require.NotContains(t, l, ts.token)
	}
	require.Equal(t, "upgrade refused", recs[0]["msg"])
	require.Equal(t, "origin not allowed", recs[0]["reason"])
	require.Equal(t, "https://evil.example", recs[0]["origin"])
	require.EqualValues(t, 403, recs[0]["status"])
	require.Contains(t, recs[0]["hint"], "--allow-origin")
	require.Equal(t, "wrong token", recs[1]["reason"])
	require.EqualValues(t, 401, recs[1]["status"])
}

func TestNewRefusesBadOrigin(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	_, err = New(Options{Store: st, Token: testToken, AllowOrigins: []string{"http://*"}})
	require.ErrorIs(t, err, ErrBadOrigin)
	require.ErrorIs(t, err, ErrConfig)
}
