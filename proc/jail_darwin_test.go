package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestJailTag: a process that left its group and lost its parent (perl's
// setsid, as macOS has no setsid command) dies when its jail closes.
func TestJailTag(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl not installed")
	}
	j := NewJail()
	if j.Backend() != BackendTag {
		t.Fatalf("backend %s", j.Backend())
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", `perl -MPOSIX -e 'fork and exit; setsid(); open(F, ">", $ARGV[0]); print F "$$\n"; close F; exec "sleep", "999"' "$1"; while [ ! -s "$1" ]; do :; done`, "sh", pidfile)
	SetGroup(cmd)
	if err := j.Sub().Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	_ = ReleaseGroup(cmd.Process.Pid, 0)
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !pidAlive(pid) {
		t.Fatal("escapee not running: the test proves nothing")
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pidAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("escapee %d outlived its jail", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
