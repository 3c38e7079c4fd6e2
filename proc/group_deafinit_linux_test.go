package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// pidsWithArg lists the live processes whose command line holds arg.
func pidsWithArg(t *testing.T, arg string) []int {
	t.Helper()
	names, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range names {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(arg)) && pidAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestKillGroupDoesNotWaitForADeafNamespaceInit: a process group whose
// member is a pid namespace's init without a SIGTERM handler (here sleep,
// run by `unshare --pid --fork`; in the sandbox, bubblewrap's init while a
// command starts): a SIGTERM from outside never reaches it, yet KillGroup
// with an hour's grace returns and the group is gone.
func TestKillGroupDoesNotWaitForADeafNamespaceInit(t *testing.T) {
	argv := []string{"unshare", "--user", "--map-root-user", "--pid", "--fork"}
	if err := exec.Command(argv[0], append(argv[1:], "true")...).Run(); err != nil {
		t.Skipf("unshare cannot make a pid namespace here: %v", err)
	}
	marker := fmt.Sprintf("300.%d", time.Now().UnixNano()%1_000_000)
	cmd := exec.Command(argv[0], append(argv[1:], "sleep", marker)...)
	SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
		<-waited
	})
	var init int
	for deadline := time.Now().Add(30 * time.Second); init == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the namespace's init never started")
		}
		for _, pid := range pidsWithArg(t, "sleep\x00"+marker) {
			if deafInit(pid) {
				init = pid
			}
		}
	}

	done := make(chan error, 1)
	go func() { done <- KillGroup(cmd.Process.Pid, time.Hour) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("KillGroup waits for a namespace init that never gets its SIGTERM")
	}
	waitDead(t, init)
	if GroupAlive(cmd.Process.Pid) {
		t.Fatal("the group is still alive")
	}
}

func TestDeafInit(t *testing.T) {
	if deafInit(os.Getpid()) {
		t.Fatal("the test process is no namespace init")
	}
	if deafInit(1 << 30) {
		t.Fatal("a missing process is no namespace init")
	}
}
