package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// The test stdio server is built once, on first use (fuzz workers that never
// need it do not pay for the build).
var (
	buildOnce sync.Once
	buildDir  string
	serverBin string
	buildErr  error
)

func testServerBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "mcp-testserver-")
		if buildErr != nil {
			return
		}
		serverBin = filepath.Join(buildDir, "mcpserver")
		if runtime.GOOS == "windows" {
			serverBin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", serverBin, "./testdata/mcpserver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build the test MCP server: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return serverBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// quietLogger discards the manager's logs unless -v.
func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func stdioConfig(t testing.TB, name string, args ...string) ServerConfig {
	return ServerConfig{Name: name, Type: TypeStdio, Command: append([]string{testServerBinary(t)}, args...), Enabled: true}
}

// statusLog records OnStatus calls.
type statusLog struct {
	mu  sync.Mutex
	all []protocol.MCPStatus
}

func (l *statusLog) add(s protocol.MCPStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
}

func (l *statusLog) has(name, state string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.all {
		if s.Name == name && s.State == state {
			return true
		}
	}
	return false
}

func newTestManager(t *testing.T, cfgs []ServerConfig, opts Options) (*Manager, *tools.Registry, *statusLog) {
	t.Helper()
	log := &statusLog{}
	opts.OnStatus = log.add
	if opts.Trust == nil {
		opts.TrustAll = true // configs written by the test; trust_test.go tests trust
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	if opts.Lazy.Enabled == nil && opts.Lazy.ThresholdTools == 0 {
		// Eager unless the test sets a threshold (automatic lazy mode).
		eager := false
		opts.Lazy.Enabled = &eager
	}
	m := NewManager(cfgs, opts)
	reg := tools.NewRegistry()
	m.Attach(reg)
	t.Cleanup(func() {
		if err := m.CloseAll(); err != nil {
			t.Errorf("CloseAll: %v", err)
		}
	})
	return m, reg, log
}

// callTool runs a registered tool's handler as the engine would.
func callTool(t *testing.T, reg *tools.Registry, name, args string) (any, error) {
	t.Helper()
	spec, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("tool %s is not registered; have %v", name, reg.Names())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return spec.Handler(ctx, tools.Call{ID: "c1", Name: name, Args: []byte(args)})
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pidAlive reports whether pid runs and is not a zombie.
func pidAlive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		return len(f) > 0 && f[0] != "Z" && f[0] != "X"
	}
	if runtime.GOOS == "linux" {
		return false
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscallZero) == nil
}

func stateOf(m *Manager, name string) protocol.MCPStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return protocol.MCPStatus{}
}
