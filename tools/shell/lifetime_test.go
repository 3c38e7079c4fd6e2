//go:build linux

package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// pollUntil waits, bounded, for cond.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	pollUntil(t, "the escapee's pid in "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// TestSetsidEscapeeDiesWithSession: a background task that starts a
// process in a new session (out of the task's process group) leaves
// nothing behind once the Manager closes.
func TestSetsidEscapeeDiesWithSession(t *testing.T) {
	f := newFixture(t, Options{})
	pidfile := filepath.Join(f.dir, "pid")
	f.startBG(t, `setsid sleep 999 & echo $! > `+pidfile+`; wait`, nil)
	pid := readPid(t, pidfile)
	if !alive(pid) {
		t.Fatalf("escapee %d not running", pid)
	}
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the escapee to die with its session", func() bool { return !alive(pid) })
}

// TestSetsidEscapeeDiesWithCommand: a foreground command's escapee is
// ended when the command ends, as its background jobs are.
func TestSetsidEscapeeDiesWithCommand(t *testing.T) {
	f := newFixture(t, Options{})
	pidfile := filepath.Join(f.dir, "pid")
	r := f.run(t, map[string]any{"command": `setsid sleep 999 > /dev/null 2>&1 & echo $! > ` + pidfile})
	if r.ExitCode != 0 {
		t.Fatalf("run: %+v", r)
	}
	pid := readPid(t, pidfile)
	pollUntil(t, "the escapee to die with its command", func() bool { return !alive(pid) })
}
