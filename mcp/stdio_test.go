//go:build !windows

package mcp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zqagent/sidecar/tools"
)

func TestStdioServerTools(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	cfg := stdioConfig(t, "test")
	cfg.Env = map[string]string{"MY_SETTING": "configured", "GITHUB_API_KEY": "mine"}
	m, reg, log := newTestManager(t, []ServerConfig{cfg}, Options{})
	connected, failed := m.ConnectAll(context.Background())
	if len(failed) > 0 || len(connected) != 1 {
		t.Fatalf("ConnectAll = %v, %v", connected, failed)
	}
	if !log.has("test", StateConnecting) || !log.has("test", StateConnected) {
		t.Fatalf("statuses: %+v", log.all)
	}
	st := stateOf(m, "test")
	if st.State != StateConnected || st.Tools != 9 || st.Type != TypeStdio {
		t.Fatalf("status = %+v", st)
	}

	spec, ok := reg.Lookup("mcp__test__echo")
	if !ok {
		t.Fatalf("echo not registered: %v", reg.Names())
	}
	if spec.Source != "mcp:test" || spec.Meta.Category != "mcp" || spec.Meta.RiskLevel != tools.RiskHigh ||
		!spec.Meta.RequiresApproval || spec.Meta.Class != tools.ClassNetwork {
		t.Fatalf("echo spec = %+v", spec)
	}
	if !strings.Contains(string(spec.Schema.Function.Parameters), `"text"`) {
		t.Fatalf("echo schema = %s", spec.Schema.Function.Parameters)
	}

	out, err := callTool(t, reg, "mcp__test__echo", `{"text":"hi there"}`)
	if err != nil || out != "echo: hi there" {
		t.Fatalf("echo = %v, %v", out, err)
	}
	out, err = callTool(t, reg, "mcp__test__add", `"{\"a\":2,\"b\":40}"`) // a wrapped object
	if err != nil || out != "42" {
		t.Fatalf("add = %v, %v", out, err)
	}
	out, err = callTool(t, reg, "mcp__test__image", `{}`)
	res, ok := out.(tools.Result)
	if err != nil || !ok || len(res.Attachments) != 1 || !strings.HasPrefix(res.Attachments[0].DataURL, "data:image/png;base64,iVBOR") {
		t.Fatalf("image = %#v, %v", out, err)
	}
	if text, _ := res.Output.(string); !strings.Contains(text, "a pixel") || !strings.Contains(text, "[image 1") {
		t.Fatalf("image text = %q", res.Output)
	}
	_, err = callTool(t, reg, "mcp__test__fail", `{}`)
	if !errors.Is(err, ErrToolFailed) || tools.ErrorType(err) != "mcp_error" || !strings.Contains(err.Error(), "it broke on purpose") {
		t.Fatalf("fail = %v (%s)", err, tools.ErrorType(err))
	}
	_, err = callTool(t, reg, "mcp__test__add", `[1,2]`)
	if !errors.Is(err, tools.ErrInvalidArgs) {
		t.Fatalf("add with an array = %v", err)
	}

	for name, want := range map[string]string{"OPENAI_API_KEY": "<unset>", "MY_SETTING": "configured", "GITHUB_API_KEY": "mine"} {
		out, err := callTool(t, reg, "mcp__test__getenv", `{"name":"`+name+`"}`)
		if err != nil || out != want {
			t.Fatalf("getenv %s = %v, %v; want %q", name, out, err, want)
		}
	}
}

func TestCallCancelledAndTimedOut(t *testing.T) {
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "slow")}, Options{CallTimeout: 300 * time.Millisecond})
	if err := m.Connect(context.Background(), "slow"); err != nil {
		t.Fatal(err)
	}
	spec, _ := reg.Lookup("mcp__slow__sleep")
	_, err := spec.Handler(context.Background(), tools.Call{Name: spec.Name, Args: []byte(`{}`)})
	if tools.ErrorType(err) != "timeout" || !strings.Contains(err.Error(), "MCP_CALL_TIMEOUT_MS") {
		t.Fatalf("timed-out call = %v (%s)", err, tools.ErrorType(err))
	}

	m.opts.CallTimeout = time.Hour // only the interrupt can end the next call
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := spec.Handler(ctx, tools.Call{Name: spec.Name, Args: []byte(`{}`)})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted call = %v", err)
	}
	// The server still answers afterwards.
	if out, err := callTool(t, reg, "mcp__slow__echo", `{"text":"still here"}`); err != nil || out != "echo: still here" {
		t.Fatalf("echo after cancel = %v, %v", out, err)
	}
}

func TestCrashThenRefresh(t *testing.T) {
	m, reg, log := newTestManager(t, []ServerConfig{stdioConfig(t, "crashy")}, Options{})
	if err := m.Connect(context.Background(), "crashy"); err != nil {
		t.Fatal(err)
	}
	out, err := callTool(t, reg, "mcp__crashy__pid", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	pid1, _ := strconv.Atoi(out.(string))

	if _, err := callTool(t, reg, "mcp__crashy__crash", `{}`); err == nil {
		t.Fatal("crash call succeeded")
	}
	waitFor(t, "status failed", func() bool { return stateOf(m, "crashy").State == StateFailed })
	st := stateOf(m, "crashy")
	if !strings.Contains(st.LastError, "exited") && !strings.Contains(st.LastError, "closed") {
		t.Fatalf("lastError = %q", st.LastError)
	}
	if !log.has("crashy", StateFailed) {
		t.Fatal("no failed status notification")
	}
	if _, ok := reg.Lookup("mcp__crashy__echo"); ok {
		t.Fatal("tools of a dead server stay registered")
	}
	waitFor(t, "the crashed process reaped", func() bool { return !pidAlive(pid1) })

	if err := m.Refresh(context.Background(), "crashy"); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(m, "crashy"); st.State != StateConnected || st.LastError != "" {
		t.Fatalf("after refresh: %+v", st)
	}
	out, err = callTool(t, reg, "mcp__crashy__pid", `{}`)
	if err != nil || out == strconv.Itoa(pid1) {
		t.Fatalf("pid after refresh = %v, %v (was %d)", out, err, pid1)
	}

	// Killed from outside, with no call in flight: the death alone is seen.
	pid2, _ := strconv.Atoi(out.(string))
	if err := syscall.Kill(pid2, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "status failed after kill", func() bool { return stateOf(m, "crashy").State == StateFailed })
	if reg.Len() != 0 {
		t.Fatalf("tools of a killed server stay registered: %v", reg.Names())
	}
	if err := m.Refresh(context.Background(), "crashy"); err != nil {
		t.Fatal(err)
	}
	if out, err := callTool(t, reg, "mcp__crashy__echo", `{"text":"back"}`); err != nil || out != "echo: back" {
		t.Fatalf("echo after second refresh = %v, %v", out, err)
	}
}

func TestCloseAllLeavesNoChild(t *testing.T) {
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "a"), stdioConfig(t, "b")}, Options{})
	if _, failed := m.ConnectAll(context.Background()); len(failed) > 0 {
		t.Fatal(failed)
	}
	var pids []int
	for _, name := range []string{"mcp__a__pid", "mcp__b__pid", "mcp__a__spawn"} {
		out, err := callTool(t, reg, name, `{}`)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(out.(string))
		if err != nil || !pidAlive(pid) {
			t.Fatalf("%s = %v (alive %v)", name, out, pidAlive(pid))
		}
		pids = append(pids, pid)
	}
	if err := m.CloseAll(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitFor(t, "process "+strconv.Itoa(pid)+" gone", func() bool { return !pidAlive(pid) })
	}
	if reg.Len() != 0 {
		t.Fatalf("tools left after CloseAll: %v", reg.Names())
	}
	for _, st := range m.Status() {
		if st.State != StateClosed {
			t.Fatalf("status after CloseAll: %+v", st)
		}
	}
	if err := m.Connect(context.Background(), "a"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Connect after CloseAll = %v", err)
	}
}

func TestConnectFailures(t *testing.T) {
	missing := ServerConfig{Name: "missing", Type: TypeStdio, Command: []string{"/nonexistent/mcp-server"}, Enabled: true}
	notMCP := ServerConfig{Name: "notmcp", Type: TypeStdio, Command: []string{"sh", "-c", "echo not json; echo oops >&2; exit 1"}, Enabled: true}
	off := stdioConfig(t, "off")
	off.Enabled = false
	m, reg, log := newTestManager(t, []ServerConfig{missing, notMCP, off}, Options{ConnectTimeout: 10 * time.Second})
	connected, failed := m.ConnectAll(context.Background())
	if len(connected) != 0 || failed["missing"] == nil || failed["notmcp"] == nil || len(failed) != 2 {
		t.Fatalf("ConnectAll = %v, %v", connected, failed)
	}
	if st := stateOf(m, "missing"); st.State != StateFailed || !strings.Contains(st.LastError, "nonexistent") {
		t.Fatalf("missing: %+v", st)
	}
	if st := stateOf(m, "off"); st.State != StateDisabled {
		t.Fatalf("off: %+v", st)
	}
	if err := m.Connect(context.Background(), "off"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("Connect disabled = %v", err)
	}
	if err := m.Connect(context.Background(), "nope"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("Connect unknown = %v", err)
	}
	if reg.Len() != 0 || !log.has("notmcp", StateFailed) {
		t.Fatalf("registry %v, statuses %+v", reg.Names(), log.all)
	}
}

func TestRegistriesPerProject(t *testing.T) {
	m1, reg1, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "one")}, Options{})
	m2, reg2, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "two")}, Options{})
	if err := m1.Connect(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	if err := m2.Connect(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	for _, n := range reg1.Names() {
		if !strings.HasPrefix(n, "mcp__one__") {
			t.Fatalf("project 1 sees %s", n)
		}
	}
	for _, n := range reg2.Names() {
		if !strings.HasPrefix(n, "mcp__two__") {
			t.Fatalf("project 2 sees %s", n)
		}
	}
	// A second session of project 1 gets the same tools; detaching removes them.
	sess := tools.NewRegistry()
	sess.MustRegister(tools.Spec{Name: "read_file", Handler: func(context.Context, tools.Call) (any, error) { return "", nil }})
	m1.Attach(sess)
	if sess.Len() != reg1.Len()+1 {
		t.Fatalf("attached registry has %v", sess.Names())
	}
	if err := m1.Disconnect("one"); err != nil {
		t.Fatal(err)
	}
	if reg1.Len() != 0 || sess.Len() != 1 {
		t.Fatalf("after disconnect: %v / %v", reg1.Names(), sess.Names())
	}
	if err := m1.Connect(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	m1.Detach(sess)
	if got := sess.Names(); len(got) != 1 || got[0] != "read_file" {
		t.Fatalf("after detach: %v", got)
	}
}

// syncBuffer is a log sink safe for concurrent writes.
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

func TestStderrLoggedWithCap(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	noisy := ServerConfig{Name: "noisy", Type: TypeStdio, Enabled: true,
		Command: []string{"sh", "-c", `i=0; while [ $i -lt 3000 ]; do echo "noise line $i padded to be quite a bit longer than usual"; i=$((i+1)); done >&2; echo bye >&2`}}
	m, _, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "quiet"), noisy}, Options{Logger: logger})
	if err := m.Connect(context.Background(), "quiet"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the startup line logged", func() bool { return strings.Contains(logs.String(), "mcpserver: starting") })
	if err := m.Connect(context.Background(), "noisy"); err == nil {
		t.Fatal("a server that is not MCP connected")
	}
	waitFor(t, "the cap warning", func() bool { return strings.Contains(logs.String(), "log cap reached") })
	if n := strings.Count(logs.String(), "noise line"); n == 0 || n >= 3000 {
		t.Fatalf("%d noise lines logged, want some but not all", n)
	}
	if st := stateOf(m, "noisy"); st.State != StateFailed || st.LastError == "" {
		t.Fatalf("noisy: %+v", st)
	}
}

func TestConnectTimeoutKillsServer(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	mute := ServerConfig{Name: "mute", Type: TypeStdio, Enabled: true, Timeout: 300 * time.Millisecond,
		Command: []string{"sh", "-c", `echo $$ > "$0"; exec sleep 300`, pidfile}}
	m, reg, _ := newTestManager(t, []ServerConfig{mute}, Options{})
	err := m.Connect(context.Background(), "mute")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect to a mute server = %v", err)
	}
	if st := stateOf(m, "mute"); st.State != StateFailed || reg.Len() != 0 {
		t.Fatalf("status = %+v", st)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitFor(t, "the mute server killed", func() bool { return !pidAlive(pid) })
}
