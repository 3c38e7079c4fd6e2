//go:build !windows

package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidAlive reports whether pid runs and is not a zombie.
func pidAlive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return len(f) > 0 && f[0] != "Z"
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

func startTree(t *testing.T, ctx context.Context, grace time.Duration) (*exec.Cmd, int) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidfile)
	SetGroup(cmd)
	cmd.Cancel = GroupCancel(cmd, grace)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidfile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return cmd, pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("grandchild pid never written")
	return nil, 0
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
	t.Fatalf("process %d still alive", pid)
}

func TestKillGroupKillsGrandchild(t *testing.T) {
	for _, grace := range []time.Duration{0, time.Second} {
		cmd, gc := startTree(t, context.Background(), grace)
		if !pidAlive(gc) {
			t.Fatal("grandchild not running")
		}
		if err := KillGroup(cmd.Process.Pid, grace); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		waitDead(t, gc)
		if GroupAlive(cmd.Process.Pid) {
			t.Fatal("GroupAlive after KillGroup and the grandchild's death")
		}
	}
}

func TestGroupCancelOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd, gc := startTree(t, ctx, time.Second)
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("Wait after cancel returned nil")
	}
	waitDead(t, gc)
}

func TestKillGroupGone(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	SetGroup(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := KillGroup(cmd.Process.Pid, time.Second); err != nil {
		t.Fatalf("KillGroup on a finished group: %v", err)
	}
	if err := KillGroup(0, 0); err != ErrBadPID {
		t.Fatalf("KillGroup(0) = %v, want ErrBadPID", err)
	}
}

func TestReleaseGroupEndsLeftovers(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", `sleep 300 & echo $! > "$1"`, "sh", pidfile)
	SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := Attach(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	gc, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !pidAlive(gc) {
		t.Fatal("leftover not running before ReleaseGroup")
	}
	if err := ReleaseGroup(cmd.Process.Pid, time.Second); err != nil {
		t.Fatal(err)
	}
	waitDead(t, gc)
}
