//go:build !windows

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/terminal"
)

// leakFake is an OpenAI-compatible endpoint (Chat Completions stream) whose
// model first runs `env` in the foreground, then `env` as a background task
// writing a file, then answers. It records the Authorization headers.
type leakFake struct {
	srv   *httptest.Server
	plain bool // answer text at once, no tool calls
	mu    sync.Mutex
	auth  []string
}

func newLeakFake(t *testing.T, plain bool) *leakFake {
	f := &leakFake{plain: plain}
	f.srv = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *leakFake) handle(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(b, &body)
	f.mu.Lock()
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	if !body.Stream { // the session-naming call
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"n","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Env check"},"finish_reason":"stop"}]}`)
		return
	}
	results := 0
	for _, m := range body.Messages {
		if m.Role == "tool" {
			results++
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta any, finish any) {
		c, _ := json.Marshal(map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", c)
	}
	call := func(id string, args map[string]any) {
		a, _ := json.Marshal(args)
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function", "function": map[string]any{"name": "run_shell", "arguments": string(a)}}}}, nil)
		chunk(map[string]any{}, "tool_calls")
	}
	switch {
	case f.plain:
		results = 2
	}
	switch results {
	case 0:
		call("call_env", map[string]any{"command": "env"})
	case 1:
		call("call_bg", map[string]any{"command": "env > bg-env.txt; echo bg-done >> bg-env.txt", "background": true})
	default:
		chunk(map[string]any{"role": "assistant", "content": "environment checked"}, nil)
		chunk(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (f *leakFake) sawKey(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.auth {
		if a == "Bearer "+key {
			return true
		}
	}
	return false
}

// requireNoKeyInDir reads every file under dir (database, WAL, session
// folders, tool results) and fails if one holds the key.
func requireNoKeyInDir(t *testing.T, dir string, key []byte) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) { // a WAL or temp file removed meanwhile
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		n++
		require.False(t, bytes.Contains(b, key), "the key is in %s", path)
		return nil
	})
	require.NoError(t, err)
	return n
}

// TestE2EKeyNeverLeaks: after a session that used an API key — a model
// request, a shell command and a background task that print their
// environment — the key's bytes are nowhere: not in any file of the data
// directory (SQLite database and WAL included), not in the sidecar's logs
// (debug level), not in a tool result, a task's environment or a PTY's.
func TestE2EKeyNeverLeaks(t *testing.T) {
	f := newLeakFake(t, false)
	rnd := make([]byte, 16)
	_, err := rand.Read(rnd)
	require.NoError(t, err)
	key := "sk-leak-" + hex.EncodeToString(rnd)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))

	// With a real keychain the key is stored with keys.set under a profile
	// of its own; otherwise it comes from OPENAI_API_KEY in the sidecar's
	// environment (the default profile).
	keychainMode := os.Getenv("ZQAGENT_KEYRING_TEST") == "1"
	profile, env := "openai", []string{"OPENAI_API_KEY=" + key}
	if keychainMode {
		profile, env = "leak-"+hex.EncodeToString(rnd[:4]), []string{"OPENAI_API_KEY="}
	}
	// The provider's audit log goes inside the data dir, so the walks below
	// check it too (it must redact the key).
	auditDir := filepath.Join(dataDir, "audit")
	env = append(env, "ZQAGENT_SCRIPT=", "ZQAGENT_AUDIT_LOG_DIR="+auditDir)
	p := spawn(t, dataDir, env...)
	c := p.connect(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": profile, "baseUrl": f.srv.URL + "/v1", "apiMode": "chat", "defaultModel": "leak-model"}, nil))
	if keychainMode {
		require.NoError(t, c.Call(tctx(t), "keys.set", map[string]any{"provider": profile, "apiKey": key}, nil))
		t.Cleanup(func() {
			// The sidecar may be gone: delete through a fresh one only if needed.
			_ = c.Call(context.Background(), "keys.delete", map[string]any{"provider": profile}, nil)
		})
	}
	var status json.RawMessage
	require.NoError(t, c.Call(tctx(t), "keys.status", nil, &status))
	require.Contains(t, string(status), `"provider":"`+profile+`","configured":true`)
	require.NotContains(t, string(status), key[:12], "keys.status never returns a key or a prefix")

	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"provider": profile})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "show me the environment")
	require.NoError(t, err)
	for range 2 { // env, then the background task: approve both
		evs := untilType(t, c, sid, "permission_required")
		perm := dataOf(t, evs[len(evs)-1])
		require.Equal(t, "run_shell", perm["name"])
		require.NoError(t, c.Respond(tctx(t), sid, perm["requestId"].(string), map[string]string{"outcome": "once"}))
	}
	evs := untilType(t, c, sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	require.True(t, f.sawKey(key), "the model request carried the key")

	// The foreground env ran, and its result lacks the key.
	var got struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	var toolOut []string
	for _, m := range got.Messages {
		if m.Role == "tool" {
			toolOut = append(toolOut, m.Content)
		}
	}
	require.Len(t, toolOut, 2)
	require.Contains(t, toolOut[0], "PATH=", "env ran")
	for _, o := range toolOut {
		require.NotContains(t, o, key)
	}

	// The background task's environment lacks the key.
	bgFile := filepath.Join(projDir, "bg-env.txt")
	var bg []byte
	require.Eventually(t, func() bool {
		bg, _ = os.ReadFile(bgFile)
		return bytes.Contains(bg, []byte("bg-done"))
	}, 30*time.Second, 20*time.Millisecond, "the background task ran")
	require.Contains(t, string(bg), "PATH=")
	require.NotContains(t, string(bg), key)

	// A PTY: through terminal.create when the sidecar routes it, else a
	// terminal.Manager of this process (the same sanitization, proc.Env)
	// with the key in its environment.
	if requireNoKeyInSidecarPTY(t, p, pid, key) {
		t.Log("PTY checked through terminal.create")
	} else {
		t.Log("terminal.create is not routed: PTY checked with a terminal.Manager of the test process")
		t.Setenv("OPENAI_API_KEY", key)
		requireNoKeyInPTY(t, projDir, key)
	}

	// While the sidecar runs (WAL present) and after it exited, no file of
	// the data directory holds the key.
	require.Positive(t, requireNoKeyInDir(t, dataDir, []byte(key)))
	if keychainMode {
		require.NoError(t, c.Call(tctx(t), "keys.delete", map[string]any{"provider": profile}, nil))
	}
	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	require.Positive(t, requireNoKeyInDir(t, dataDir, []byte(key)))
	audits := 0
	require.NoError(t, filepath.WalkDir(auditDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			audits++
		}
		return err
	}))
	require.Positive(t, audits, "the audit log recorded the model requests (and was scanned above)")
	logs := p.stderr.String()
	require.NotEmpty(t, logs)
	require.NotContains(t, logs, key, "the key is never logged")
	require.Empty(t, p.stdout.String())
}

// ptyOutput collects a terminal's output until it exits.
type ptyOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	exit chan struct{}
}

func (o *ptyOutput) Output(out terminal.Output) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(out.Data)
	return true
}
func (o *ptyOutput) Exit(terminal.Exit)    { close(o.exit) }
func (o *ptyOutput) Dropped(string, int64) {}
func (o *ptyOutput) String() string        { o.mu.Lock(); defer o.mu.Unlock(); return o.buf.String() }
func (o *ptyOutput) wait(ctx context.Context) error {
	select {
	case <-o.exit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func requireNoKeyInPTY(t *testing.T, projDir, key string) {
	t.Helper()
	m := terminal.NewManager(terminal.Options{Logger: slog.New(slog.DiscardHandler)})
	defer func() { require.NoError(t, m.Close()) }()
	info, err := m.Create(tctx(t), terminal.CreateOptions{ProjectID: "p", ProjectDir: projDir, Command: []string{"env"}})
	require.NoError(t, err)
	out := &ptyOutput{exit: make(chan struct{})}
	unsub, err := m.Subscribe("p", info.ID, 0, out)
	require.NoError(t, err)
	defer unsub()
	require.NoError(t, out.wait(tctx(t)))
	s := out.String()
	require.Contains(t, s, "TERM=", "env ran in the PTY")
	require.NotContains(t, s, key)
	require.NotContains(t, s, "OPENAI_API_KEY")
}

// TestE2ENoSecretServiceKeysSetFailsClearlyEnvKeyWorks: with no Secret
// Service reachable, keys.set fails with -32005 naming the cause and the
// remedy (no silent plaintext fallback), and OPENAI_API_KEY still serves a
// turn.
func TestE2ENoSecretServiceKeysSetFailsClearlyEnvKeyWorks(t *testing.T) {
	f := newLeakFake(t, true)
	key := "sk-envonly-0123456789abcdef"
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent", "OPENAI_API_KEY="+key, "ZQAGENT_SCRIPT=",
		"OPENAI_BASE_URL="+f.srv.URL+"/v1", "OPENAI_FORCE_API_MODE=chat", "OPENAI_MODEL=env-model")
	c := p.connect(t)
	err := c.Call(tctx(t), "keys.set", map[string]any{"provider": "openai", "apiKey": "sk-never-stored-abcdef0123"}, nil)
	require.Equal(t, client.CodeConfig, client.Code(err))
	require.Contains(t, err.Error(), "OS keychain not available")
	require.Contains(t, err.Error(), "set OPENAI_API_KEY", "the remedy")
	require.NotContains(t, err.Error(), "sk-never-stored")

	var status struct {
		Keys []struct {
			Provider   string `json:"provider"`
			Configured bool   `json:"configured"`
			Source     string `json:"source"`
		} `json:"keys"`
	}
	require.NoError(t, c.Call(tctx(t), "keys.status", nil, &status))
	require.Contains(t, status.Keys, struct {
		Provider   string `json:"provider"`
		Configured bool   `json:"configured"`
		Source     string `json:"source"`
	}{"openai", true, "env"})

	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "turn_end")
	require.Equal(t, "environment checked", deltaText(t, evs))
	require.True(t, f.sawKey(key))
	require.NotContains(t, p.stderr.String(), "sk-never-stored")
}

// requireNoKeyInSidecarPTY runs env in a terminal of the sidecar and checks
// its output; it reports false when terminal.create is not routed.
func requireNoKeyInSidecarPTY(t *testing.T, p *proc, projectID, key string) bool {
	t.Helper()
	// A connection of its own: its notifications are the terminal's.
	c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
	require.NoError(t, err)
	defer c.Close()
	raw, err := c.Initialize(tctx(t), "leak", "1", false)
	require.NoError(t, err)
	var methods struct {
		Capabilities struct {
			Methods []string `json:"methods"`
		} `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(raw, &methods))
	require.NotEmpty(t, methods.Capabilities.Methods)
	if !slices.Contains(methods.Capabilities.Methods, "terminal.create") {
		return false
	}
	var info struct {
		ID string `json:"id"`
	}
	require.NoError(t, c.Call(tctx(t), "terminal.create", map[string]any{"projectId": projectID, "command": []string{"env"}, "cols": 120, "rows": 40}, &info))
	require.NotEmpty(t, info.ID)
	require.NoError(t, c.Call(tctx(t), "terminal.subscribe", map[string]any{"projectId": projectID, "terminalId": info.ID, "afterSeq": 0}, nil))
	var out bytes.Buffer
	for {
		select {
		case n := <-c.Notifications():
			var prm struct {
				TerminalID string `json:"terminalId"`
				Data       []byte `json:"data"` // base64 on the wire
			}
			require.NoError(t, json.Unmarshal(n.Params, &prm))
			if prm.TerminalID != info.ID {
				continue
			}
			switch n.Method {
			case "terminal.output":
				out.Write(prm.Data)
				continue
			case "terminal.exit":
			default:
				continue
			}
		case <-tctx(t).Done():
			t.Fatalf("no terminal.exit; output so far:\n%s", out.String())
		}
		break
	}
	require.Contains(t, out.String(), "TERM=", "env ran in the PTY")
	require.NotContains(t, out.String(), key)
	require.NotContains(t, out.String(), "OPENAI_API_KEY")
	return true
}
