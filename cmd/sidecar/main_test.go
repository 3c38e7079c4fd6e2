package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/ipc/client"
)

// sidecarBin is the binary built once for the end-to-end tests.
var sidecarBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sidecar-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sidecarBin = filepath.Join(dir, "sidecar")
	build := exec.Command("go", "build", "-o", sidecarBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build sidecar:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(
			// The process-wide D-Bus session connection go-keyring opens on
			// Linux (real keychain tests: mcp_oauth_e2e_test.go) lives until exit.
			goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.newConn.func1"),
			goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).inWorker"),
			goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).outWorker"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer is a goroutine-safe buffer for a child's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one running sidecar.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	ready   client.Ready
	stdout  *syncBuffer // everything after the ready line (must stay empty)
	stderr  *syncBuffer
	done    chan struct{} // closed when the process was reaped
	waitErr error
}

// spawn starts the sidecar on dataDir, with env added to this process's
// environment, and reads its ready line.
func spawn(t *testing.T, dataDir string, env ...string) *proc {
	t.Helper()
	return spawnWith(t, dataDir, spawnOptions{env: append(os.Environ(), env...)})
}

// spawnOptions are the variations of spawnWith.
type spawnOptions struct {
	env       []string // the whole environment
	args      []string // more flags
	stdinLine string   // written to stdin first, with a newline, when not ""
	bin       string   // the binary ("": sidecarBin)
	wrap      []string // a command that runs the binary (e.g. setpriv …)
}

// spawnWith starts the sidecar on dataDir and reads its ready line.
func spawnWith(t *testing.T, dataDir string, o spawnOptions) *proc {
	t.Helper()
	bin := sidecarBin
	if o.bin != "" {
		bin = o.bin
	}
	argv := append(append(append([]string{}, o.wrap...), bin, "--data-dir", dataDir, "--log-level", "debug", "--allow-origin", "tauri://localhost"), o.args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = o.env
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &proc{cmd: cmd, stdin: stdin, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	if o.stdinLine != "" {
		_, err := io.WriteString(stdin, o.stdinLine+"\n")
		require.NoError(t, err)
	}
	readyc := make(chan error, 1)
	br := bufio.NewReader(out)
	go func() {
		line, err := br.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &p.ready)
		}
		readyc <- err
		_, _ = io.Copy(p.stdout, br) // anything more on stdout is a bug
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		if !p.waitFor(15 * time.Second) {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("sidecar stderr:\n%s", p.stderr.String())
		}
	})
	select {
	case err := <-readyc:
		require.NoError(t, err, "ready line; stderr: %s", p.stderr.String())
	case <-p.done:
		t.Fatalf("sidecar exited before ready: %v\n%s", p.waitErr, p.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("no ready line")
	}
	require.Equal(t, "ready", p.ready.Event)
	return p
}

func (p *proc) waitFor(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect dials and initializes.
func (p *proc) connect(t *testing.T) *client.Client {
	t.Helper()
	c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Initialize(tctx(t), "e2e", "1", false)
	require.NoError(t, err)
	return c
}

// writeScript writes a scripted-provider script and returns its path.
func writeScript(t *testing.T, responses ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"responses": responses})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func text(s string) map[string]any { return map[string]any{"text": s} }

func toolCall(id, name string, args any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"id": id, "name": name, "arguments": string(b)}
}

func calls(textBefore string, cs ...map[string]any) map[string]any {
	return map[string]any{"text": textBefore, "toolCalls": cs}
}

// setup spawns a sidecar with a script and returns it, a client, a project
// folder and a subscribed session.
type env struct {
	p       *proc
	c       *client.Client
	dataDir string
	projDir string
	sid     string
}

func setup(t *testing.T, script string, sessionExtra map[string]any) *env {
	t.Helper()
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: filepath.Join(t.TempDir(), "proj")}
	require.NoError(t, os.MkdirAll(e.projDir, 0o755))
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	e.c = e.p.connect(t)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	e.sid, err = e.c.CreateSession(tctx(t), pid, sessionExtra)
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	return e
}

// untilType reads events until one of type typ and returns all read.
func untilType(t *testing.T, c *client.Client, sid, typ string) []client.Event {
	t.Helper()
	var out []client.Event
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		out = append(out, ev)
		if ev.Type == typ {
			return out
		}
	}
}

func dataOf(t *testing.T, ev client.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &m))
	return m
}

func ofType(evs []client.Event, typ string) []client.Event {
	var out []client.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func deltaText(t *testing.T, evs []client.Event) string {
	s := ""
	for _, ev := range ofType(evs, "assistant_delta") {
		s += dataOf(t, ev)["text"].(string)
	}
	return s
}

// toolResults returns the contents of a session's tool messages.
func toolResults(t *testing.T, c *client.Client, sid string) []string {
	t.Helper()
	var got struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	var out []string
	for _, m := range got.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}
