//go:build !windows

package terminal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestEchoRoundTrip(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"/bin/sh"}})
	if !strings.HasPrefix(in.ID, "term_") || len(in.ID) != len("term_")+12 || !in.Alive || in.Pid <= 0 {
		t.Fatalf("info = %+v", in)
	}
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	if err := m.Write("p1", in.ID, []byte("echo hello-$((40+2))\n")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "hello-42") // the shell computed it: it is output, not the echo of the input
	if err := m.Write("p1", in.ID, []byte("exit 0\n")); err != nil {
		t.Fatal(err)
	}
	if e := r.waitExit(t); e.ExitCode != 0 || e.TerminalID != in.ID {
		t.Fatalf("exit = %+v", e)
	}
}

func TestResizeSeenBySttySize(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"/bin/sh"}, Cols: 80, Rows: 24})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	if err := m.Write("p1", in.ID, []byte("stty size\n")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "24 80")
	if err := m.Resize("p1", in.ID, 132, 41); err != nil {
		t.Fatal(err)
	}
	if err := m.Write("p1", in.ID, []byte("stty size\n")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "41 132")
	if got, _ := m.Get("p1", in.ID); got.Cols != 132 || got.Rows != 41 {
		t.Fatalf("info size %dx%d", got.Cols, got.Rows)
	}
	if err := m.Resize("p1", in.ID, 0, 10); !errors.Is(err, ErrInvalid) {
		t.Fatalf("zero size: %v", err)
	}
}

func TestExitCode(t *testing.T) {
	m := newManager(t, Options{})
	for _, tc := range []struct {
		script string
		code   int
	}{
		{"printf 'last words'; exit 7", 7},
		{"exit 0", 0},
		{"kill -TERM $$", 128 + 15},
	} {
		in := create(t, m, CreateOptions{Command: sh(tc.script)})
		r, _ := subscribe(t, m, "p1", in.ID, 0)
		e := r.waitExit(t)
		if e.ExitCode != tc.code {
			t.Errorf("%q: exit code %d, want %d", tc.script, e.ExitCode, tc.code)
		}
		if tc.code == 7 && !strings.Contains(r.text(), "last words") {
			t.Errorf("output before exit missing: %q", r.text())
		}
		got, err := m.Get("p1", in.ID)
		if err != nil || got.Alive || got.ExitCode == nil || *got.ExitCode != tc.code {
			t.Errorf("%q: info after exit %+v, %v", tc.script, got, err)
		}
		if err := m.Write("p1", in.ID, []byte("x")); !errors.Is(err, ErrExited) {
			t.Errorf("write after exit: %v", err)
		}
		// A late subscriber gets the replay, then the same exit.
		late, _ := subscribe(t, m, "p1", in.ID, 0)
		if e := late.waitExit(t); e.ExitCode != tc.code || late.text() != r.text() {
			t.Errorf("late subscriber: %+v %q vs %q", e, late.text(), r.text())
		}
	}
}

// grandchild parses "gc=<pid>" from the output.
func grandchild(t *testing.T, r *recorder) int {
	t.Helper()
	r.waitUntil(t, "grandchild pid", func(r *recorder) bool {
		s := r.data.String()
		i := strings.Index(s, "gc=")
		return i >= 0 && strings.ContainsAny(s[i:], "\r\n")
	})
	s := r.text()
	s = s[strings.Index(s, "gc=")+3:]
	s = s[:strings.IndexAny(s, "\r\n")]
	pid, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("grandchild pid %q", s)
	}
	if gone(pid) {
		t.Fatalf("grandchild %d not running before the kill", pid)
	}
	return pid
}

func TestKillProcessGroup(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		// A grandchild in the shell's process group that ignores SIGTERM and
		// SIGHUP: only the SIGKILL after the grace period stops it.
		{"stubborn grandchild", `(trap "" TERM HUP; : >ready; exec sleep 1000) & while [ ! -e ready ]; do :; done; echo gc=$!; wait`},
		// Job control puts the job in a process group of its own; it is
		// still in the terminal's session.
		{"job in its own group", `set -m; sleep 1000 & echo gc=$!; wait`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, Options{})
			in := create(t, m, CreateOptions{Command: sh(tc.script)})
			r, _ := subscribe(t, m, "p1", in.ID, 0)
			pid := grandchild(t, r)
			if err := m.Kill("p1", in.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Get("p1", in.ID); !errors.Is(err, ErrNotFound) {
				t.Fatalf("killed terminal still known: %v", err)
			}
			r.waitExit(t) // the subscriber still learns the end
			poll(t, "grandchild dead", func() bool { return gone(pid) })
			poll(t, "shell dead", func() bool { return gone(in.Pid) })
		})
	}
}

func TestShellExitCleansUpLeftovers(t *testing.T) {
	m := newManager(t, Options{})
	// The grandchild does not hold the terminal and ignores the hangup.
	in := create(t, m, CreateOptions{Command: sh(`(trap "" TERM HUP; : >ready; exec sleep 1000) </dev/null >/dev/null 2>&1 & while [ ! -e ready ]; do :; done; echo gc=$!`)})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	pid := grandchild(t, r)
	if e := r.waitExit(t); e.ExitCode != 0 {
		t.Fatalf("exit %d", e.ExitCode)
	}
	poll(t, "leftover grandchild dead", func() bool { return gone(pid) })
	// The exited terminal stays listed until it is killed.
	if got := m.List("p1"); len(got) != 1 || got[0].Alive {
		t.Fatalf("list after exit: %+v", got)
	}
	if err := m.Kill("p1", in.ID); err != nil {
		t.Fatal(err)
	}
	if got := m.List("p1"); len(got) != 0 {
		t.Fatalf("list after kill: %+v", got)
	}
}

func TestReplayAfterResubscribe(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"cat"}})
	r1, unsub1 := subscribe(t, m, "p1", in.ID, 0)
	if err := m.Write("p1", in.ID, []byte("alpha\n")); err != nil {
		t.Fatal(err)
	}
	r1.waitCount(t, "alpha", 2) // the tty's echo, then cat's copy
	r1.stop()
	unsub1()
	part1, resume := r1.text(), r1.next

	for _, w := range []string{"beta\n", "gamma\n"} {
		if err := m.Write("p1", in.ID, []byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	full, _ := subscribe(t, m, "p1", in.ID, 0)
	full.waitCount(t, "gamma", 2)

	r2, _ := subscribe(t, m, "p1", in.ID, resume)
	r2.waitCount(t, "gamma", 2)
	if r2.firstSeq != resume {
		t.Fatalf("resubscribe started at %d, want %d", r2.firstSeq, resume)
	}
	if got, want := part1+r2.text(), full.text(); got != want {
		t.Fatalf("concatenation differs:\n got %q\nwant %q", got, want)
	}
	if strings.Count(full.text(), "alpha") != 2 || strings.Count(full.text(), "gamma") != 2 {
		t.Fatalf("full = %q", full.text())
	}

	// End of input: cat exits; both live subscribers get Exit after the
	// same, complete stream.
	if err := m.Write("p1", in.ID, []byte{4}); err != nil {
		t.Fatal(err)
	}
	full.waitExit(t)
	r2.waitExit(t)
	if part1+r2.text() != full.text() {
		t.Fatal("streams differ at exit")
	}
	for _, r := range []*recorder{full, r2} {
		if r.seqErr != nil {
			t.Fatal(r.seqErr)
		}
	}
	if got, _ := m.Get("p1", in.ID); got.LastSeq != full.next {
		t.Fatalf("LastSeq %d, delivered up to %d", got.LastSeq, full.next)
	}
}

func TestReplayGapWhenRingOverwritten(t *testing.T) {
	const ringSize = 4096
	m := newManager(t, Options{Scrollback: ringSize})
	in := create(t, m, CreateOptions{Command: sh(`i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done`)})
	var full strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&full, "line %d\r\n", i)
	}
	poll(t, "exited", func() bool { info, _ := m.Get("p1", in.ID); return !info.Alive })
	late, _ := subscribe(t, m, "p1", in.ID, 0)
	late.waitExit(t)
	total := int64(full.Len())
	if info, _ := m.Get("p1", in.ID); info.LastSeq != total {
		t.Fatalf("LastSeq %d, want %d", info.LastSeq, total)
	}
	if late.firstSeq != total-ringSize {
		t.Fatalf("replay starts at %d, want the ring's start %d", late.firstSeq, total-ringSize)
	}
	if want := full.String()[total-ringSize:]; late.text() != want {
		t.Fatalf("replay is not the stream's tail:\n%q", tail(late.text(), 200))
	}
}

func TestSlowSubscriberDropped(t *testing.T) {
	const ringSize = 64 << 10
	m := newManager(t, Options{Scrollback: ringSize})
	in := create(t, m, CreateOptions{Command: sh(`read x; read y; yes | head -c 1000000; exec sleep 1000`)})
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // never leave it stuck
	slow := newRecorder()
	slow.holdFirst(release)
	unsub, err := m.Subscribe("p1", in.ID, 0, slow)
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	if err := m.Write("p1", in.ID, []byte("go\n")); err != nil {
		t.Fatal(err)
	}
	<-slow.holding // stuck in its first Output; now start the flood
	if err := m.Write("p1", in.ID, []byte("flood\n")); err != nil {
		t.Fatal(err)
	}
	const total = int64(len("go\r\nflood\r\n") + 500000*len("y\r\n"))
	poll(t, "the whole flood in", func() bool { info, _ := m.Get("p1", in.ID); return info.LastSeq == total })
	slow.mu.Lock()
	missed := slow.next
	slow.mu.Unlock()
	once.Do(func() { close(release) })
	slow.waitUntil(t, "dropped", func(r *recorder) bool { return r.dropped >= 0 })
	if slow.dropped != missed {
		t.Fatalf("dropped at %d, want the first undelivered byte %d", slow.dropped, missed)
	}
	// Subscribing again from there starts at the oldest byte held.
	again, _ := subscribe(t, m, "p1", in.ID, slow.dropped)
	info, _ := m.Get("p1", in.ID)
	again.waitUntil(t, "replay", func(r *recorder) bool { return r.next == info.LastSeq })
	if again.firstSeq != info.LastSeq-ringSize || again.firstSeq <= missed {
		t.Fatalf("re-subscribe from %d started at %d (ring start %d)", missed, again.firstSeq, info.LastSeq-ringSize)
	}
	if again.seqErr != nil {
		t.Fatal(again.seqErr)
	}
}

func TestProjectIsolation(t *testing.T) {
	m := newManager(t, Options{})
	ctx := context.Background()
	a := create(t, m, CreateOptions{ProjectID: "A", Command: sh("echo secret-of-A; exec cat"), Name: "a-term"})
	b := create(t, m, CreateOptions{ProjectID: "B", Command: sh("echo secret-of-B; exec cat"), Name: "b-term"})
	ra, _ := subscribe(t, m, "A", a.ID, 0)
	rb, _ := subscribe(t, m, "B", b.ID, 0)
	ra.waitFor(t, "secret-of-A")
	rb.waitFor(t, "secret-of-B")

	for _, p := range []struct {
		project, own, other, secret, leak string
	}{{"A", a.ID, b.ID, "secret-of-A", "secret-of-B"}, {"B", b.ID, a.ID, "secret-of-B", "secret-of-A"}} {
		list, err := m.ListTerminals(ctx, p.project)
		if err != nil || len(list) != 1 || list[0].ID != p.own || !list[0].Alive || list[0].Cwd != "." {
			t.Fatalf("ListTerminals(%s) = %+v, %v", p.project, list, err)
		}
		text, err := m.ReadTerminal(ctx, p.project, p.own, 10, 1000)
		if err != nil || !strings.Contains(text, p.secret) || strings.Contains(text, p.leak) {
			t.Fatalf("ReadTerminal(%s, own) = %q, %v", p.project, text, err)
		}
		if _, err := m.ReadTerminal(ctx, p.project, p.other, 10, 1000); !errors.Is(err, ErrNotFound) || !errors.Is(err, tools.ErrNotFound) {
			t.Fatalf("ReadTerminal(%s, other) err = %v", p.project, err)
		}
		if err := m.Write(p.project, p.other, []byte("x")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Write across projects: %v", err)
		}
		if _, err := m.Get(p.project, p.other); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get across projects: %v", err)
		}
		if err := m.Resize(p.project, p.other, 10, 10); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Resize across projects: %v", err)
		}
		if _, err := m.Subscribe(p.project, p.other, 0, newRecorder()); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Subscribe across projects: %v", err)
		}
		if err := m.Kill(p.project, p.other); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Kill across projects: %v", err)
		}
		if got := m.List(p.project); len(got) != 1 || got[0].ID != p.own {
			t.Fatalf("List(%s) = %+v", p.project, got)
		}
	}
	// Both terminals survived the attempts and still work.
	if err := m.Write("B", b.ID, []byte("still-here\n")); err != nil {
		t.Fatal(err)
	}
	rb.waitCount(t, "still-here", 2)
	if list, _ := m.ListTerminals(ctx, "nobody"); len(list) != 0 {
		t.Fatalf("unknown project lists %+v", list)
	}

	m.CloseProject("A")
	if got := m.List("A"); len(got) != 0 {
		t.Fatalf("A after CloseProject: %+v", got)
	}
	ra.waitExit(t)
	poll(t, "A's shell dead", func() bool { return gone(a.Pid) })
	if got, err := m.Get("B", b.ID); err != nil || !got.Alive {
		t.Fatalf("B after closing A: %+v, %v", got, err)
	}
}

func TestANSIStrippedFromRealOutput(t *testing.T) {
	m := newManager(t, Options{})
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := create(t, m, CreateOptions{ProjectDir: dir, Command: sh(`printf '\033[31mred\033[0m plain\n'; ls --color=always`)})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	if r.waitExit(t).ExitCode != 0 {
		t.Skipf("ls --color=always not supported here: %q", r.text())
	}
	raw := r.text()
	if !strings.Contains(raw, "\x1b[31mred\x1b[0m") || strings.Count(raw, "\x1b[") < 4 {
		t.Fatalf("expected colored output, got %q", raw)
	}
	text, err := m.ReadTerminal(context.Background(), "p1", in.ID, 50, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(text, "\x1b\r") {
		t.Fatalf("escape or CR left: %q", text)
	}
	for _, want := range []string{"red plain", "subdir", "run.sh"} {
		if !strings.Contains(text, want) {
			t.Fatalf("%q missing from %q", want, text)
		}
	}
	if got, _ := m.ReadTerminal(context.Background(), "p1", in.ID, 1, 4096); strings.Contains(got, "red plain") || !strings.Contains(got, "subdir") && !strings.Contains(got, "run.sh") {
		t.Fatalf("last line = %q", got)
	}
}

func TestCwdConfinedToProject(t *testing.T) {
	m := newManager(t, Options{})
	dir := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"sub", "sub/deeper"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "inner")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	for _, tc := range []struct {
		cwd, want string
	}{
		{"", realDir},
		{"sub/deeper", filepath.Join(realDir, "sub", "deeper")},
		{filepath.Join(dir, "sub"), filepath.Join(realDir, "sub")},
		{"inner", filepath.Join(realDir, "sub")},
	} {
		in := create(t, m, CreateOptions{ProjectDir: dir, Cwd: tc.cwd, Command: sh("pwd -P")})
		r, _ := subscribe(t, m, "p1", in.ID, 0)
		r.waitExit(t)
		if got := strings.TrimSpace(r.text()); got != tc.want || in.Cwd != tc.want {
			t.Errorf("cwd %q: pwd %q, info %q, want %q", tc.cwd, got, in.Cwd, tc.want)
		}
	}
	for _, cwd := range []string{"..", "sub/../..", outside, "escape", "escape/x", "/"} {
		_, err := m.Create(context.Background(), CreateOptions{ProjectID: "p1", ProjectDir: dir, Cwd: cwd, Command: sh("true")})
		if !errors.Is(err, ErrOutsideProject) || !errors.Is(err, tools.ErrOutsideWorkspace) {
			t.Errorf("cwd %q: err = %v, want ErrOutsideProject", cwd, err)
		}
	}
	for _, cwd := range []string{"missing", "file"} {
		_, err := m.Create(context.Background(), CreateOptions{ProjectID: "p1", ProjectDir: dir, Cwd: cwd, Command: sh("true")})
		if err == nil || errors.Is(err, ErrOutsideProject) {
			t.Errorf("cwd %q: err = %v", cwd, err)
		}
	}
	if got := m.List("p1"); len(got) != 4 {
		t.Fatalf("refused creates left terminals: %d", len(got))
	}
}

func TestEnvironmentSanitized(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret-value")
	t.Setenv("ZQAGENT_TOKEN", "tok-secret-value")
	t.Setenv("TERM", "dumb")
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"env"}, Env: map[string]string{"MY_SETTING": "on"}})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	r.waitExit(t)
	env := r.text()
	for _, want := range []string{"TERM=xterm-256color\r\n", "MY_SETTING=on\r\n", "PWD=" + in.Cwd + "\r\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q", want)
		}
	}
	for _, leak := range []string{"OPENAI_API_KEY", "sk-secret-value", "ZQAGENT_TOKEN", "tok-secret-value", "TERM=dumb"} {
		if strings.Contains(env, leak) {
			t.Errorf("env leaks %q", leak)
		}
	}
	if _, err := m.Create(context.Background(), CreateOptions{ProjectID: "p1", ProjectDir: t.TempDir(), Command: []string{"env"}, Env: map[string]string{"A=B": "x"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad env name: %v", err)
	}
}

func TestAgentViewShowsForegroundCommand(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"/bin/sh"}, Name: "dev"})
	if err := m.Write("p1", in.ID, []byte("sleep 1000\n")); err != nil {
		t.Fatal(err)
	}
	var list []tools.TerminalInfo
	poll(t, "foreground sleep listed", func() bool {
		list, _ = m.ListTerminals(context.Background(), "p1")
		return len(list) == 1 && list[0].Command == "sleep 1000"
	})
	if list[0].Name != "dev" || list[0].ID != in.ID || !list[0].Alive {
		t.Fatalf("list = %+v", list)
	}
}

func TestClosedManager(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"cat"}})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if r.exit == nil { // Close waited for the subscription to end
		t.Fatal("no exit delivered before Close returned")
	}
	if !gone(in.Pid) {
		t.Fatal("process alive after Close")
	}
	if _, err := m.Create(context.Background(), CreateOptions{ProjectID: "p1", ProjectDir: t.TempDir(), Command: []string{"cat"}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("create after close: %v", err)
	}
	if _, err := m.Get("p1", in.ID); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
}

func TestInputQueueBounded(t *testing.T) {
	m := newManager(t, Options{})
	// sleep never reads its input: the PTY's input buffer fills, then the
	// queue, and Write refuses instead of blocking.
	in := create(t, m, CreateOptions{Command: []string{"sleep", "1000"}})
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = 'a' + byte(i%26)
	}
	var err error
	for i := 0; i < 64 && err == nil; i++ {
		err = m.Write("p1", in.ID, chunk)
	}
	if !errors.Is(err, ErrInputFull) {
		t.Fatalf("4 MiB into a terminal that does not read: %v", err)
	}
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	if err := m.Kill("p1", in.ID); err != nil { // the writer, stuck in a write, ends with the PTY
		t.Fatal(err)
	}
	r.waitExit(t)
}

func TestExitAfterAllOutput(t *testing.T) {
	m := newManager(t, Options{Scrollback: 8 << 20})
	in := create(t, m, CreateOptions{Command: sh(`yes abc | head -c 3000000; exit 5`)})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	e := r.waitExit(t)
	const want = 3000000 / 4 * 5 // "abc\n" becomes "abc\r\n"
	if e.ExitCode != 5 || r.data.Len() != want || r.seqErr != nil || r.dropped >= 0 {
		t.Fatalf("exit %d after %d bytes (want %d), seq error %v, dropped %d", e.ExitCode, r.data.Len(), want, r.seqErr, r.dropped)
	}
}

func TestSubscribeSeqClamped(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: sh(`printf 0123456789`)})
	first, _ := subscribe(t, m, "p1", in.ID, 0)
	first.waitExit(t)
	for _, tc := range []struct {
		after     int64
		wantFirst int64 // -1: no output, only Exit
		want      string
	}{
		{-5, 0, "0123456789"},
		{4, 4, "456789"},
		{10, -1, ""},
		{1000, -1, ""},
	} {
		r, _ := subscribe(t, m, "p1", in.ID, tc.after)
		r.waitExit(t)
		if r.firstSeq != tc.wantFirst || r.text() != tc.want {
			t.Errorf("afterSeq %d: first %d %q, want %d %q", tc.after, r.firstSeq, r.text(), tc.wantFirst, tc.want)
		}
	}
}

// TestProcessEscapingTheSession: a process that makes a session of its own
// is out of the kill's reach, but while it holds the terminal open the
// terminal must still finish and Close must not hang.
func TestProcessEscapingTheSession(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: sh(`setsid sh -c 'echo gc=$$; : >ready; exec sleep 1000' & while [ ! -e ready ]; do :; done`)})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	pid := grandchild(t, r)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if e := r.waitExit(t); e.ExitCode != 0 {
		t.Fatalf("exit %d", e.ExitCode)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
