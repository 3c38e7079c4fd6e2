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

// escapees are commands whose process leaves the command's process group
// (so the group kill misses it). The escapee writes its own pid to $1 once
// it is out of the group, and the shell waits for that before it exits.
var escapees = map[string]string{
	"setsid":             `setsid sh -c "$INNER" sh "$1" & ` + waitPid,
	"double fork":        `(setsid sh -c "$INNER" sh "$1" &); ` + waitPid,
	"setsid, then forks": `setsid sh -c 'sh -c "$INNER" sh "$1" &' sh "$1"; ` + waitPid,
}

const (
	waitPid = `while [ ! -s "$1" ]; do :; done`
	inner   = `echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 999`
)

// startEscapee runs script in sub like the shell tools do (own group,
// group released when the shell exits) and returns the escapee's pid,
// alive after its shell is gone.
func startEscapee(t *testing.T, sub *Jail, script string) int {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("/bin/sh", "-c", script, "sh", pidfile)
	cmd.Env = append(os.Environ(), "INNER="+inner)
	SetGroup(cmd)
	if err := sub.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	_ = ReleaseGroup(cmd.Process.Pid, 0)
	pid := waitPidfile(t, pidfile)
	if !pidAlive(pid) {
		t.Fatalf("escapee %d is not running: the test proves nothing", pid)
	}
	return pid
}

func waitPidfile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("escapee pid never written")
	return 0
}

func testJail(t *testing.T, want string) {
	for name, script := range escapees {
		t.Run(name, func(t *testing.T) {
			// Closing the session's jail ends what its commands left.
			session := NewJail()
			if got := session.Backend(); got != want {
				t.Skipf("backend %s here, not %s", got, want)
			}
			pid := startEscapee(t, session.Sub(), script)
			if err := session.Close(); err != nil {
				t.Fatal(err)
			}
			waitDead(t, pid)
			if err := session.Start(exec.Command("true")); err != ErrJailClosed {
				t.Fatalf("Start after Close = %v", err)
			}

			// Closing a command's own jail ends what it left, too.
			session = NewJail()
			defer session.Close()
			sub := session.Sub()
			pid = startEscapee(t, sub, script)
			if err := sub.Close(); err != nil {
				t.Fatal(err)
			}
			waitDead(t, pid)
		})
	}
}

func TestJailCgroup(t *testing.T) {
	if ownCgroup() == "" {
		t.Skip("no cgroup v2 hierarchy here")
	}
	testJail(t, BackendCgroup)
}

func TestJailSubreaper(t *testing.T) {
	forceSubreaper.Store(true)
	defer forceSubreaper.Store(false)
	testJail(t, BackendSubreaper)
}

// TestJailSparesOthers: a jail's kill does not reach a process outside it.
func TestJailSparesOthers(t *testing.T) {
	defer forceSubreaper.Store(false)
	for _, force := range []bool{false, true} {
		forceSubreaper.Store(force)
		other := exec.Command("sleep", "999")
		if err := other.Start(); err != nil {
			t.Fatal(err)
		}
		j := NewJail()
		pid := startEscapee(t, j.Sub(), escapees["setsid"])
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		waitDead(t, pid)
		if !pidAlive(other.Process.Pid) {
			t.Fatalf("%s jail killed a process outside it", j.Backend())
		}
		_ = other.Process.Kill()
		_ = other.Wait()
	}
}

// TestJailStaleCgroups: the jail of a sidecar that died without closing it
// (SIGKILL) is ended by the next one.
func TestJailStaleCgroups(t *testing.T) {
	root := ownCgroup()
	probe := NewJail()
	defer probe.Close()
	if root == "" || probe.Backend() != BackendCgroup {
		t.Skip("no writable cgroup v2 hierarchy here")
	}
	// A pid that is surely gone: a reaped child's.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "zqagent-"+strconv.Itoa(dead.Process.Pid)+"-1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	j := &Jail{plat: jailPlatform{cg: dir}}
	pid := startEscapee(t, j, escapees["setsid"])
	removeStale(root)
	waitDead(t, pid)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("stale cgroup %s still there: %v", dir, err)
	}
}

// TestJailSubreaperMidExec: a process caught between the two halves of an
// exec (its new image has no environment yet, so no tag to read) is not
// taken for gone. The process here does nothing but exec itself.
func TestJailSubreaperMidExec(t *testing.T) {
	forceSubreaper.Store(true)
	defer forceSubreaper.Store(false)
	const loop = `exec /bin/sh -c "$0" "$0"`
	for range 30 {
		j := NewJail()
		if j.Backend() != BackendSubreaper {
			t.Skipf("backend %s here", j.Backend())
		}
		cmd := exec.Command("/bin/sh", "-c", loop, loop)
		if err := j.Start(cmd); err != nil {
			t.Fatal(err)
		}
		err := j.Close()
		alive := pidAlive(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if alive {
			t.Fatalf("process %d alive after Close", cmd.Process.Pid)
		}
	}
}
