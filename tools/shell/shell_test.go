//go:build !windows

package shell

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/shellcmd"
	"github.com/zqagent/sidecar/tools"
)

type fixture struct {
	dir string
	reg *tools.Registry
	m   *Manager
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Workspace = ws
	if opts.KillGrace == 0 {
		opts.KillGrace = time.Second
	}
	reg := tools.NewRegistry()
	m := RegisterShellTool(reg, opts)
	t.Cleanup(func() { m.Close() })
	return &fixture{dir: ws.Root(), reg: reg, m: m}
}

func (f *fixture) call(ctx context.Context, t *testing.T, name string, args any) (any, error) {
	t.Helper()
	spec, ok := f.reg.Lookup(name)
	if !ok {
		t.Fatalf("tool %s not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return spec.Handler(ctx, tools.Call{ID: "c1", Name: name, Args: raw})
}

func (f *fixture) run(t *testing.T, args map[string]any) RunResult {
	t.Helper()
	res, err := f.call(context.Background(), t, "run_shell", args)
	if err != nil {
		t.Fatalf("run_shell %v: %v", args, err)
	}
	return res.(RunResult)
}

func (f *fixture) startBG(t *testing.T, command string, extra map[string]any) string {
	t.Helper()
	args := map[string]any{"command": command, "background": true}
	for k, v := range extra {
		args[k] = v
	}
	res, err := f.call(context.Background(), t, "run_shell", args)
	if err != nil {
		t.Fatalf("run_shell background: %v", err)
	}
	return res.(StartResult).TaskID
}

func (f *fixture) output(t *testing.T, id string, offset int64) TaskOutput {
	t.Helper()
	res, err := f.call(context.Background(), t, "shell_task_output", map[string]any{"task_id": id, "offset": offset})
	if err != nil {
		t.Fatalf("shell_task_output: %v", err)
	}
	return res.(TaskOutput)
}

// grandchildScript starts a sleep in the background, writes its pid to a
// file and waits for it: the sleep is a grandchild of the tool.
func (f *fixture) grandchildScript() (string, string) {
	pidfile := filepath.Join(f.dir, "gc.pid")
	return `sleep 300 & echo $! > gc.pid; wait`, pidfile
}

func readPID(t *testing.T, pidfile string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidfile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			if !pidAlive(pid) {
				t.Fatalf("grandchild %d not running", pid)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("grandchild pid never written")
	return 0
}

// pidAlive reports whether pid runs and is not a zombie.
func pidAlive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		return len(f) > 0 && f[0] != "Z" && f[0] != "X"
	}
	return syscall.Kill(pid, 0) == nil
}

func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !pidAlive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("grandchild %d still alive", pid)
}

func TestRunShellBasics(t *testing.T) {
	f := newFixture(t, Options{})
	tests := []struct {
		cmd  string
		code int
		out  string
	}{
		{"echo hello", 0, "hello\n"},
		{"echo out; echo err >&2; exit 3", 3, "out\nerr\n"},
		{"printf 'a\\nb'", 0, "a\nb"},
		{"read x; echo got:$x", 0, "got:\n"}, // stdin is empty
	}
	if r := f.run(t, map[string]any{"command": "kill -9 $$"}); r.ExitCode != -1 || !strings.Contains(r.Error, "signal") {
		t.Errorf("killed by a signal: %+v", r)
	}
	for _, tc := range tests {
		r := f.run(t, map[string]any{"command": tc.cmd})
		if r.ExitCode != tc.code || r.Output != tc.out || r.TimedOut || r.Truncated {
			t.Errorf("%q: got %+v, want code %d output %q", tc.cmd, r, tc.code, tc.out)
		}
	}
}

func TestRunShellCwd(t *testing.T) {
	f := newFixture(t, Options{})
	if err := os.Mkdir(filepath.Join(f.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	r := f.run(t, map[string]any{"command": "pwd", "cwd": "sub"})
	if strings.TrimSpace(r.Output) != filepath.Join(f.dir, "sub") {
		t.Fatalf("pwd in sub = %q", r.Output)
	}
	r = f.run(t, map[string]any{"command": "pwd"})
	if strings.TrimSpace(r.Output) != f.dir {
		t.Fatalf("pwd in root = %q", r.Output)
	}
	for _, cwd := range []string{"..", outside, "link", "sub/../../x", f.dir + "-evil"} {
		_, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": "pwd", "cwd": cwd})
		if !errors.Is(err, tools.ErrOutsideWorkspace) {
			t.Errorf("cwd %q: err = %v, want ErrOutsideWorkspace", cwd, err)
		}
	}
	_, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": "pwd", "cwd": "file"})
	if !errors.Is(err, ErrNotDir) {
		t.Errorf("cwd file: err = %v, want ErrNotDir", err)
	}
	_, err = f.call(context.Background(), t, "run_shell", map[string]any{"command": "pwd", "cwd": "missing"})
	if !errors.Is(err, tools.ErrNotFound) {
		t.Errorf("cwd missing: err = %v, want ErrNotFound", err)
	}
	_, err = f.call(context.Background(), t, "run_shell", map[string]any{"command": "  "})
	if !errors.Is(err, tools.ErrInvalidArgs) {
		t.Errorf("empty command: err = %v, want ErrInvalidArgs", err)
	}
}

func TestRunShellEnvHasNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-parent-secret")
	t.Setenv("ZQAGENT_TOKEN", "tok-secret")
	t.Setenv("HARMLESS_VAR", "visible")
	f := newFixture(t, Options{Env: []string{"EXTRA_VAR=extra"}})
	r := f.run(t, map[string]any{"command": "env"})
	for _, bad := range []string{"OPENAI_API_KEY", "sk-parent-secret", "ZQAGENT_TOKEN", "tok-secret"} {
		if strings.Contains(r.Output, bad) {
			t.Errorf("child environment holds %q", bad)
		}
	}
	for _, good := range []string{"HARMLESS_VAR=visible", "EXTRA_VAR=extra"} {
		if !strings.Contains(r.Output, good) {
			t.Errorf("child environment lacks %q", good)
		}
	}
}

func TestRunShellOutputCap(t *testing.T) {
	f := newFixture(t, Options{MaxOutput: 1000})
	r := f.run(t, map[string]any{"command": "seq 1 20000"})
	if !r.Truncated || len(r.Output) > 1100 {
		t.Fatalf("truncated=%v len=%d", r.Truncated, len(r.Output))
	}
	if !strings.HasPrefix(r.Output, "1\n2\n3\n") || !strings.HasSuffix(r.Output, "19999\n20000\n") {
		t.Fatalf("head/tail not kept: %q...%q", r.Output[:20], r.Output[len(r.Output)-20:])
	}
	if !strings.Contains(r.Output, "bytes of output elided") {
		t.Fatalf("no elision note in %q", r.Output)
	}
}

func TestRunShellTimeoutKillsGrandchild(t *testing.T) {
	f := newFixture(t, Options{})
	script, pidfile := f.grandchildScript()
	done := make(chan RunResult, 1)
	go func() {
		res, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": script, "timeout_ms": 300})
		if err != nil {
			t.Error(err)
		}
		r, _ := res.(RunResult)
		done <- r
	}()
	pid := readPID(t, pidfile)
	r := <-done
	if !r.TimedOut || r.ExitCode == 0 || r.Error == "" {
		t.Fatalf("result %+v, want timed out", r)
	}
	waitDead(t, pid)
}

func TestRunShellInterruptKillsGrandchild(t *testing.T) {
	f := newFixture(t, Options{})
	script, pidfile := f.grandchildScript()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := f.call(ctx, t, "run_shell", map[string]any{"command": script})
		errc <- err
	}()
	pid := readPID(t, pidfile)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	waitDead(t, pid)
}

func TestRunShellExitKillsLeftovers(t *testing.T) {
	f := newFixture(t, Options{})
	r := f.run(t, map[string]any{"command": `sleep 300 & echo $! > left.pid; echo started`})
	if r.ExitCode != 0 || r.Output != "started\n" {
		t.Fatalf("result %+v", r)
	}
	pid := readPIDNoCheck(t, filepath.Join(f.dir, "left.pid"))
	waitDead(t, pid)
}

func readPIDNoCheck(t *testing.T, pidfile string) int {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestTaskKillKillsGrandchild(t *testing.T) {
	f := newFixture(t, Options{})
	script, pidfile := f.grandchildScript()
	id := f.startBG(t, "echo ready; "+script, nil)
	pid := readPID(t, pidfile)
	res, err := f.call(context.Background(), t, "shell_task_kill", map[string]any{"task_id": id})
	if err != nil {
		t.Fatal(err)
	}
	k := res.(KillResult)
	if !k.WasRunning || k.Ended != "killed" || k.ExitCode == nil || *k.ExitCode == 0 || k.Tail != "ready\n" {
		t.Fatalf("kill result %+v", k)
	}
	waitDead(t, pid)
	out := f.output(t, id, 0)
	if out.Running || out.Ended != "killed" || out.Output != "ready\n" {
		t.Fatalf("output after kill %+v", out)
	}
	// A second kill of an ended task is fine.
	if _, err := f.call(context.Background(), t, "shell_task_kill", map[string]any{"task_id": id}); err != nil {
		t.Fatal(err)
	}
}

func TestBackgroundTimeoutKillsGrandchild(t *testing.T) {
	f := newFixture(t, Options{})
	script, pidfile := f.grandchildScript()
	id := f.startBG(t, script, map[string]any{"timeout_ms": 300})
	pid := readPID(t, pidfile)
	waitDead(t, pid)
	waitTaskDone(t, f, id)
	if out := f.output(t, id, 0); out.Ended != "timeout" {
		t.Fatalf("ended = %q, want timeout", out.Ended)
	}
}

func waitTaskDone(t *testing.T, f *fixture, id string) TaskOutput {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if out := f.output(t, id, 0); !out.Running {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s still running", id)
	return TaskOutput{}
}

func TestCloseKillsEverything(t *testing.T) {
	f := newFixture(t, Options{})
	id := f.startBG(t, `sleep 300 & echo $! > bg.pid; wait`, nil)
	bgPID := readPID(t, filepath.Join(f.dir, "bg.pid"))
	errc := make(chan error, 1)
	go func() {
		_, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": `sleep 300 & echo $! > fg.pid; wait`})
		errc <- err
	}()
	fgPID := readPID(t, filepath.Join(f.dir, "fg.pid"))
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	waitDead(t, bgPID)
	waitDead(t, fgPID)
	if err := <-errc; err != nil {
		t.Fatalf("foreground run after Close: %v", err)
	}
	if out := f.output(t, id, 0); out.Running || out.Ended != "session_closed" {
		t.Fatalf("task after Close %+v", out)
	}
	_, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": "true"})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("run after Close: err = %v, want ErrClosed", err)
	}
}

func TestTaskOutputIncremental(t *testing.T) {
	f := newFixture(t, Options{})
	id := f.startBG(t, `for i in 1 2 3 4 5; do echo line$i; sleep 0.05; done`, nil)
	var got strings.Builder
	var off int64
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out := f.output(t, id, off)
		if out.Offset != off || out.Dropped != 0 {
			t.Fatalf("read at %d started at %d (dropped %d)", off, out.Offset, out.Dropped)
		}
		got.WriteString(out.Output)
		off = out.NextOffset
		if !out.Running && !out.More {
			if out.ExitCode == nil || *out.ExitCode != 0 {
				t.Fatalf("exit code %v", out.ExitCode)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.String() != "line1\nline2\nline3\nline4\nline5\n" {
		t.Fatalf("incremental output = %q", got.String())
	}
	if out := f.output(t, id, 6); out.Output != "line2\nline3\nline4\nline5\n" || out.NextOffset != 30 {
		t.Fatalf("read from 6 = %+v", out)
	}
	if out := f.output(t, id, 1000); out.Output != "" || out.NextOffset != 30 {
		t.Fatalf("read past end = %+v", out)
	}
}

func TestTaskOutputChunks(t *testing.T) {
	f := newFixture(t, Options{MaxOutput: 100, TaskBuffer: 1000})
	id := f.startBG(t, `seq 1 2000`, nil)
	waitTaskDone(t, f, id)
	// seq 1 2000 prints 8893 bytes; only the head (50 bytes) and the
	// last 1000..2000 are kept.
	first := f.output(t, id, 0)
	if len(first.Output) != 50 || !first.More || first.NextOffset != 50 || !strings.HasPrefix(first.Output, "1\n2\n") {
		t.Fatalf("first chunk %+v", first)
	}
	mid := f.output(t, id, 50)
	if mid.Dropped == 0 || mid.Offset != 50+mid.Dropped || len(mid.Output) != 100 || !mid.More {
		t.Fatalf("middle read %+v, want dropped bytes", mid)
	}
	last := f.output(t, id, 8893-10)
	if last.Output != "\n1999\n2000\n"[1:] || last.More {
		t.Fatalf("last chunk %+v", last)
	}
}

func TestUnknownTaskAndIsolation(t *testing.T) {
	a := newFixture(t, Options{})
	b := newFixture(t, Options{})
	id := a.startBG(t, "echo a", nil)
	for _, name := range []string{"shell_task_output", "shell_task_kill"} {
		for _, f := range []*fixture{a, b} {
			bad := "nope"
			if f == b {
				bad = id // a's task is invisible to b
			}
			_, err := f.call(context.Background(), t, name, map[string]any{"task_id": bad})
			if !errors.Is(err, tools.ErrNotFound) || tools.ErrorType(err) != "not_found" {
				t.Errorf("%s(%q): err = %v, want ErrNotFound", name, bad, err)
			}
		}
	}
	if got := a.m.Tasks(); len(got) != 1 || got[0].ID != id {
		t.Fatalf("Tasks = %+v", got)
	}
	if got := b.m.Tasks(); len(got) != 0 {
		t.Fatalf("other manager's Tasks = %+v", got)
	}
}

func TestMaxTasks(t *testing.T) {
	f := newFixture(t, Options{MaxTasks: 2})
	f.startBG(t, "sleep 300", nil)
	f.startBG(t, "sleep 300", nil)
	_, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": "sleep 300", "background": true})
	if !errors.Is(err, ErrTooManyTasks) {
		t.Fatalf("third task: err = %v, want ErrTooManyTasks", err)
	}
}

func TestShellMetadata(t *testing.T) {
	f := newFixture(t, Options{})
	want := map[string]struct {
		class    tools.Class
		risk     tools.Risk
		approval bool
	}{
		"run_shell":         {tools.ClassExec, tools.RiskHigh, true},
		"shell_task_kill":   {tools.ClassExec, tools.RiskHigh, true},
		"shell_task_output": {tools.ClassRead, tools.RiskLow, false},
	}
	for name, w := range want {
		s, ok := f.reg.Lookup(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if s.Meta.Class != w.class || s.Meta.RiskLevel != w.risk || s.Meta.RequiresApproval != w.approval {
			t.Errorf("%s meta = %+v", name, s.Meta)
		}
		if s.Schema.Function.Description == "" || !json.Valid(s.Schema.Function.Parameters) {
			t.Errorf("%s: bad schema", name)
		}
	}
}

func TestWrap(t *testing.T) {
	var seen []string
	f := newFixture(t, Options{Wrap: func(argv []string) ([]string, error) {
		seen = argv
		return append([]string{"/usr/bin/env", "WRAPPED=1"}, argv...), nil
	}})
	r := f.run(t, map[string]any{"command": "echo $WRAPPED"})
	if r.Output != "1\n" || len(seen) != 3 || seen[0] != shellcmd.Interpreter() || seen[1] != "-c" {
		t.Fatalf("wrap: output %q argv %v", r.Output, seen)
	}
}
