package ipc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/store"
)

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
	resp = upgradeRequest(t, ts, func(r *http.Request) { r.Header.Set("Origin", "app://bundle") })
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode, "the electron preset lets an app:// renderer in")

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
	require.ErrorIs(t, err, wsrpc.ErrBadOrigin)
	require.ErrorIs(t, err, wsrpc.ErrConfig)
}
