package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// upgradeStatus sends one raw WebSocket upgrade to p with the token and the
// given Origin and returns the HTTP status.
func upgradeStatus(t *testing.T, p *proc, origin string) int {
	t.Helper()
	req, err := http.NewRequest("GET", strings.Replace(p.ready.URL, "ws://", "http://", 1), nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Authorization", "Bearer "+p.ready.Token)
	req.Header.Set("Origin", origin)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// The presets let real shells in (an Electron app:// renderer, a Tauri
// webview, a dev server under either loopback name), and each refusal is
// one JSON line on stderr that says why and what to do. A file:// page's
// "Origin: null" is refused even with the electron preset, with a hint
// naming the custom scheme.
func TestE2EOriginPresetsAndRefusalLines(t *testing.T) {
	p := spawnWith(t, filepath.Join(t.TempDir(), "data"), spawnOptions{env: os.Environ(),
		args: []string{"--allow-origin", "electron", "--allow-origin", "tauri", "--allow-origin", "http://localhost:5173"}})
	for _, o := range []string{"app://bundle", "app://-", "tauri://localhost", "http://tauri.localhost", "https://tauri.localhost", "http://localhost:5173", "http://127.0.0.1:5173"} {
		require.Equal(t, http.StatusSwitchingProtocols, upgradeStatus(t, p, o), o)
	}
	require.Equal(t, http.StatusForbidden, upgradeStatus(t, p, "null"))
	require.Equal(t, http.StatusForbidden, upgradeStatus(t, p, "file://"))
	require.Equal(t, http.StatusForbidden, upgradeStatus(t, p, "http://localhost:5174"))

	// stderr is a pipe: the lines may reach the buffer after the answers.
	refusalLines := func() (out []map[string]any) {
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			var m map[string]any
			if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "upgrade refused" {
				out = append(out, m)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(refusalLines()) >= 3 }, time.Minute, 10*time.Millisecond, p.stderr.String())
	refusals := refusalLines()
	require.Len(t, refusals, 3, p.stderr.String())
	require.Equal(t, "null", refusals[0]["origin"])
	require.Equal(t, "origin not allowed", refusals[0]["reason"])
	require.Contains(t, refusals[0]["hint"], "custom scheme", "a null origin's hint says what an Electron renderer does instead")
	require.Contains(t, refusals[0]["hint"], "app://")
	require.Equal(t, "file://", refusals[1]["origin"])
	require.Equal(t, "http://localhost:5174", refusals[2]["origin"])
	require.Contains(t, refusals[2]["hint"], "--allow-origin")
	require.NotContains(t, p.stderr.String(), p.ready.Token)
}

func TestE2EBadAllowOriginIsAStartError(t *testing.T) {
	for _, bad := range []string{"null", "http://*", "localhost:5173", "file://", "https://*.example.com", "app://*.bundle"} {
		cmd := exec.Command(sidecarBin, "--data-dir", filepath.Join(t.TempDir(), "data"), "--allow-origin", bad)
		var stderr, stdout bytes.Buffer
		cmd.Stderr, cmd.Stdout = &stderr, &stdout
		require.Error(t, cmd.Run(), bad)
		require.Contains(t, stderr.String(), "--allow-origin", bad)
		require.Empty(t, stdout.String(), "no ready line")
	}
}

// A browser that offers the token subprotocol without zqagent.v1 would get
// no subprotocol back and close with 1006, silently: the sidecar refuses
// the upgrade (400) and says why on stderr.
func TestE2ETokenSubprotocolAloneIsRefusedWithAReason(t *testing.T) {
	p := spawnWith(t, filepath.Join(t.TempDir(), "data"), spawnOptions{env: os.Environ()})
	offer := func(protos string) int {
		req, err := http.NewRequest("GET", strings.Replace(p.ready.URL, "ws://", "http://", 1), nil)
		require.NoError(t, err)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		req.Header.Set("Sec-WebSocket-Protocol", protos)
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusBadRequest, offer("zqagent.token."+p.ready.Token))
	require.Equal(t, http.StatusSwitchingProtocols, offer("zqagent.v1, zqagent.token."+p.ready.Token))
	var line map[string]any
	require.Eventually(t, func() bool {
		for _, l := range strings.Split(p.stderr.String(), "\n") {
			if strings.HasPrefix(l, "{") && json.Unmarshal([]byte(l), &line) == nil && line["msg"] == "upgrade refused" {
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond, p.stderr.String())
	require.Equal(t, "subprotocol zqagent.v1 not offered", line["reason"])
	require.EqualValues(t, 400, line["status"])
	require.Contains(t, line["hint"], `["zqagent.v1", "zqagent.token.<token>"]`)
	require.NotContains(t, p.stderr.String(), p.ready.Token)
}
