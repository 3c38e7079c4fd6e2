package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// processesWith lists the pids whose command line contains marker.
func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(marker)) {
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if strings.Contains(string(stat), ") Z ") {
				continue // a zombie is already dead
			}
			out = append(out, e.Name())
		}
	}
	return out
}

func TestE2EStdinEOFDuringShellTaskLeavesNoChild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	marker := fmt.Sprintf("4%d.5", time.Now().UnixNano()%1_000_000)
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "sleep " + marker, "background": true})),
		map[string]any{"text": "waiting", "stall": true},
	)
	e := setup(t, script, map[string]any{"mode": "auto"})
	_, err := e.c.StartTurn(tctx(t), e.sid, "sleep in the background")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "tool_finished")
	untilType(t, e.c, e.sid, "llm_request") // the turn is still running (stalled model)
	require.NotEmpty(t, processesWith(t, marker), "the background task runs")

	require.NoError(t, e.p.stdin.Close())
	require.True(t, e.p.waitFor(15*time.Second), "exits on stdin EOF")
	require.NoError(t, e.p.waitErr)
	require.Empty(t, processesWith(t, marker), "no orphan left")
	require.Contains(t, e.p.stderr.String(), "stdin closed")
}

func TestE2EShutdownMethodAndSignal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := spawn(t, dir)
	c := p.connect(t)
	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	require.NoError(t, p.waitErr)

	p2 := spawn(t, dir)
	require.NoError(t, p2.cmd.Process.Signal(syscall.SIGTERM))
	require.True(t, p2.waitFor(15*time.Second))
	require.NoError(t, p2.waitErr)
}

func TestE2ESecondInstanceRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	p := spawn(t, dir)
	cmd := exec.Command(sidecarBin, "--data-dir", dir)
	var stderr, stdout bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	err := cmd.Run()
	require.Error(t, err)
	require.Contains(t, stderr.String(), "another sidecar is already running")
	require.Contains(t, stderr.String(), fmt.Sprint(p.cmd.Process.Pid))
	require.Empty(t, stdout.String())
}

func TestE2ETokenFromEnvironmentAndSecurity(t *testing.T) {
	token := strings.Repeat("ab", 32)
	p := spawn(t, filepath.Join(t.TempDir(), "data"), "ZQAGENT_TOKEN="+token)
	require.Equal(t, token, p.ready.Token)
	port := strings.TrimSuffix(strings.TrimPrefix(p.ready.URL, "ws://127.0.0.1:"), "/rpc")
	status := func(mutate func(*http.Request)) int {
		req, err := http.NewRequest("GET", "http://127.0.0.1:"+port+"/rpc", nil)
		require.NoError(t, err)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		req.Header.Set("Authorization", "Bearer "+token)
		mutate(req)
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, status(func(r *http.Request) { r.Header.Del("Authorization") }))
	require.Equal(t, http.StatusUnauthorized, status(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("cd", 32)) }))
	require.Equal(t, http.StatusUnauthorized, status(func(r *http.Request) { r.Header.Set("Authorization", "Bearer abc") }))
	require.Equal(t, http.StatusForbidden, status(func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }))
	require.Equal(t, http.StatusForbidden, status(func(r *http.Request) { r.Host = "attacker.example:" + port }))
	require.Equal(t, http.StatusSwitchingProtocols, status(func(r *http.Request) { r.Header.Set("Origin", "tauri://localhost") }))
	require.NotContains(t, p.stderr.String(), token)
}

func TestE2EMalformedAndOversizedFrames(t *testing.T) {
	e := setup(t, writeScript(t, text("survived")), nil)
	bad := e.p.connect(t)
	require.NoError(t, bad.WriteRaw(tctx(t), []byte(`{"jsonrpc":"2.0","id":1,`)))
	n := <-bad.Notifications()
	require.Contains(t, string(n.Params), "-32700")
	err := bad.Call(tctx(t), "turn.start", map[string]any{"sessionId": e.sid, "text": 42}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err))
	require.Contains(t, err.Error(), "text")

	_ = bad.WriteRaw(tctx(t), bytes.Repeat([]byte("x"), 57<<20))
	<-bad.Done()
	require.Equal(t, websocket.StatusMessageTooBig, bad.CloseStatus())

	_, err = e.c.StartTurn(tctx(t), e.sid, "still there?")
	require.NoError(t, err)
	require.Equal(t, "survived", deltaText(t, untilType(t, e.c, e.sid, "turn_end")))
}
