package wsrpc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExpandOrigins(t *testing.T) {
	got, err := ExpandOrigins([]string{"electron", "TAURI", "http://localhost:5173/", "myapp://*"})
	require.NoError(t, err)
	require.Equal(t, []string{"app://*", "http://localhost:5173", "http://tauri.localhost", "https://tauri.localhost", "myapp://*", "tauri://localhost"}, got)

	for _, bad := range []string{"", "null", "NULL", "file://", "file:", "file:///home/ada/app/index.html",
		"http://*", "https://*", "https://*.example.com", "http://*:5173", "app://*.bundle", "*://localhost",
		"localhost:5173", "http://x.example/path", "http://user@x.example", "://x", "http://x.example?q=1"} {
		_, err := ExpandOrigins([]string{bad})
		require.ErrorIs(t, err, ErrBadOrigin, "%q", bad)
	}
	for _, v := range []string{"null", "file://"} {
		_, err = ExpandOrigins([]string{v})
		require.ErrorContains(t, err, "--allow-origin electron", "%s: the error tells an Electron developer what to do", v)
		require.ErrorContains(t, err, "app://", v)
	}
	_, err = ExpandOrigins([]string{"https://*.example.com"})
	require.ErrorContains(t, err, "the only wildcard is scheme://*", "a subdomain wildcard is refused, not taken literally")
}

// endpointWithOrigins is an endpoint allowing these origins.
func endpointWithOrigins(t *testing.T, origins ...string) *Endpoint {
	t.Helper()
	e := &Endpoint{}
	require.NoError(t, e.SetOrigins(origins))
	return e
}

func TestOriginAllowed(t *testing.T) {
	s := endpointWithOrigins(t, "electron", "tauri", "http://localhost:5173", "https://127.0.0.1:8443")
	cases := []struct {
		origin string
		ok     bool
	}{
		{"file://", false}, // Chromium sends null from file:// pages; the preset admits neither
		{"FILE://", false},
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
	require.False(t, endpointWithOrigins(t).originAllowed("app://-"), "no preset: app:// is refused")
}
