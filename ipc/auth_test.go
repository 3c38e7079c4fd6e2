package ipc

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
)

// upgradeRequest sends a raw WebSocket upgrade and returns the status.
func upgradeRequest(t *testing.T, ts *testServer, mutate func(r *http.Request)) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/rpc", ts.port), nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Authorization", "Bearer "+ts.token)
	mutate(req)
	tr := &http.Transport{}
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	t.Cleanup(func() {
		resp.Body.Close()
		tr.CloseIdleConnections()
	})
	return resp
}

func TestUpgradeRefusals(t *testing.T) {
	ts := startServer(t)
	cases := []struct {
		name   string
		mutate func(r *http.Request)
		status int
	}{
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("f", len(ts.token))) }, http.StatusUnauthorized},
		{"short token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+ts.token[:10]) }, http.StatusUnauthorized},
		{"long token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+ts.token+"00") }, http.StatusUnauthorized},
		{"token in wrong scheme", func(r *http.Request) { r.Header.Set("Authorization", "Basic "+ts.token) }, http.StatusUnauthorized},
		{"foreign origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, http.StatusForbidden},
		{"rebinding host", func(r *http.Request) { r.Host = fmt.Sprintf("evil.example:%d", ts.port) }, http.StatusForbidden},
		{"wrong port in host", func(r *http.Request) { r.Host = "127.0.0.1:1" }, http.StatusForbidden},
		{"allowed origin", func(r *http.Request) { r.Header.Set("Origin", "tauri://localhost") }, http.StatusSwitchingProtocols},
		{"localhost host", func(r *http.Request) { r.Host = fmt.Sprintf("localhost:%d", ts.port) }, http.StatusSwitchingProtocols},
		{"token subprotocol", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.Header.Set("Sec-WebSocket-Protocol", "zqagent.v1, zqagent.token."+ts.token)
		}, http.StatusSwitchingProtocols},
		{"wrong token subprotocol", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.Header.Set("Sec-WebSocket-Protocol", "zqagent.v1, zqagent.token.nope")
		}, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := upgradeRequest(t, ts, tc.mutate)
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status == http.StatusSwitchingProtocols {
				require.NotContains(t, resp.Header.Get("Sec-WebSocket-Protocol"), "token")
			}
		})
	}
}

func TestDialStatusesAndSubprotocolEcho(t *testing.T) {
	ts := startServer(t)
	_, err := client.Dial(tctx(t), ts.url, "wrong", nil)
	var de *client.DialError
	require.ErrorAs(t, err, &de)
	require.Equal(t, http.StatusUnauthorized, de.Status)

	_, err = client.Dial(tctx(t), ts.url, ts.token, &client.Options{Origin: "https://evil.example"})
	require.ErrorAs(t, err, &de)
	require.Equal(t, http.StatusForbidden, de.Status)

	c, err := client.Dial(tctx(t), ts.url, ts.token, &client.Options{Subprotocol: true, Origin: "tauri://localhost"})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, wsrpc.Subprotocol, c.Subprotocol())
	_, err = c.Initialize(tctx(t), "t", "1", false)
	require.NoError(t, err)
}

func TestServeRefusesNonLoopback(t *testing.T) {
	ts := startServer(t)
	ln, err := netListen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip("cannot listen on 0.0.0.0:", err)
	}
	defer ln.Close()
	require.ErrorIs(t, ts.srv.Serve(ln), wsrpc.ErrForbidden)
}
