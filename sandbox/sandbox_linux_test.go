//go:build linux

package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBwrapConfines runs real commands under bubblewrap: a write outside the
// workspace fails, a write inside succeeds. Where bwrap is installed but
// cannot run (no user namespaces), the reported reason is checked instead.
func TestBwrapConfines(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		st, _ := Resolve(Config{})
		if st.Enforced || !strings.Contains(st.Reason, "apt-get install bubblewrap") {
			t.Fatalf("without bwrap: %+v", st)
		}
		t.Skip("bwrap not installed (apt-get install bubblewrap)")
	}
	st, err := Resolve(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Enforced {
		if st.Kind != KindNone || !strings.Contains(st.Reason, "cannot create a sandbox") {
			t.Fatalf("bwrap present but not enforced, unclear reason: %+v", st)
		}
		t.Logf("bwrap unusable here: %s", st.Reason)
		return
	}
	if st.Kind != KindBwrap || !strings.Contains(Describe(st), "bubblewrap") {
		t.Fatalf("status %+v", st)
	}
	ws := t.TempDir()
	forbidden := filepath.Join("/etc", "zqagent-sandbox-test")
	run := func(script string) error {
		argv := Wrap(st, ws, nil, []string{"sh", "-c", script})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("%s: %v: %s", script, err, out)
		}
		return err
	}
	if err := run("touch " + forbidden); err == nil {
		_ = os.Remove(forbidden)
		t.Fatal("a write to /etc succeeded inside the sandbox")
	}
	if _, err := os.Stat(forbidden); err == nil {
		_ = os.Remove(forbidden)
		t.Fatal("file appeared in /etc")
	}
	if err := run("echo hi > " + filepath.Join(ws, "inside.txt")); err != nil {
		t.Fatalf("write inside the workspace failed: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(ws, "inside.txt"))
	if err != nil || strings.TrimSpace(string(b)) != "hi" {
		t.Fatalf("inside.txt = %q, %v", b, err)
	}
	// Reads outside the workspace still work: the system is read-only, not hidden.
	if err := run("cat /etc/hostname >/dev/null || cat /etc/passwd >/dev/null"); err != nil {
		t.Fatalf("read outside the workspace failed: %v", err)
	}
}

// bwrapOrSkip returns the working bwrap status, or skips with the reason.
func bwrapOrSkip(t *testing.T, network bool) Status {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed (apt-get install bubblewrap)")
	}
	st, err := Resolve(Config{Network: network})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Enforced {
		t.Skipf("the kernel refuses the namespaces bwrap needs here: %s", st.Reason)
	}
	return st
}

func runIn(t *testing.T, st Status, ws string, args ...string) ([]byte, error) {
	t.Helper()
	argv := Wrap(st, ws, nil, args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = ws
	return cmd.CombinedOutput()
}

// TestBwrapProtectsGitAndAgent: a sandboxed command cannot plant a git
// config or an MCP server, by writing, replacing or renaming.
func TestBwrapProtectsGitAndAgent(t *testing.T) {
	st := bwrapOrSkip(t, false)
	ws := t.TempDir()
	files := map[string]string{".git/config": "[core]\n\tbare = false\n", ".agent/mcp.json": "{}\n"}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, script := range []string{
		`printf '[filter "x"]\n\tclean = touch /tmp/pwned\n' >> .git/config`,
		`echo '{"mcpServers":{"x":{"command":"touch"}}}' > .agent/mcp.json`,
		`rm -f .git/config`, `mv .git .git-old`, `rm -rf .agent`,
		`touch .git/hooks-planted .agent/planted`,
	} {
		if out, err := runIn(t, st, ws, "sh", "-c", script); err == nil {
			t.Errorf("%s succeeded in the sandbox: %s", script, out)
		}
	}
	for name, body := range files {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil || string(b) != body {
			t.Errorf("%s changed: %q, %v", name, b, err)
		}
	}
	for _, marker := range []string{".git/hooks-planted", ".agent/planted", ".git-old"} {
		if _, err := os.Lstat(filepath.Join(ws, marker)); err == nil {
			t.Errorf("%s appeared", marker)
		}
	}
	// The rest of the workspace stays writable.
	if out, err := runIn(t, st, ws, "sh", "-c", "echo ok > src.txt"); err != nil {
		t.Fatalf("workspace write failed: %v: %s", err, out)
	}
}

// TestBwrapNetwork: with the network off, a listener on the host's
// 127.0.0.1 cannot be reached; with it allowed, it can.
func TestBwrapNetwork(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash (for /dev/tcp) not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	defer func() { l.Close(); <-done }()
	script := "echo hi > /dev/tcp/127.0.0.1/" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)

	off := bwrapOrSkip(t, false)
	if off.Network {
		t.Fatalf("network reported on: %+v", off)
	}
	if out, err := runIn(t, off, t.TempDir(), bash, "-c", script); err == nil {
		t.Fatalf("connect to the host's 127.0.0.1 succeeded with the network off: %s", out)
	}
	select {
	case <-accepted:
		t.Fatal("the listener saw a connection from the sandbox")
	default:
	}

	on := bwrapOrSkip(t, true)
	if !on.Network {
		t.Fatalf("network reported off: %+v", on)
	}
	if out, err := runIn(t, on, t.TempDir(), bash, "-c", script); err != nil {
		t.Fatalf("with the network allowed the connect failed: %v: %s", err, out)
	}
	<-accepted
}

// TestBwrapPidNamespace: the command sees only its own processes.
func TestBwrapPidNamespace(t *testing.T) {
	st := bwrapOrSkip(t, false)
	out, err := runIn(t, st, t.TempDir(), "sh", "-c", "echo $$; ls /proc | grep -c '^[0-9]'")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("output %q", out)
	}
	if n, _ := strconv.Atoi(f[1]); n > 4 {
		t.Fatalf("the sandbox sees %d processes, not a fresh pid namespace", n)
	}
	// The sidecar (here: this test) is not there to read (environ, fds).
	self := "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"
	if _, err := os.Stat(self); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, st, t.TempDir(), "sh", "-c", "test ! -e "+self); err != nil {
		t.Fatalf("%s is visible in the sandbox: %v %s", self, err, out)
	}
}

// TestBwrapHidesCredentials: the user's credential stores and the paths
// the session hides (the sidecar's data dir) cannot be read inside; the
// workspace is never hidden, even when it lies inside a hidden path.
func TestBwrapHidesCredentials(t *testing.T) {
	st := bwrapOrSkip(t, false)
	home, data := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	secrets := map[string]string{
		filepath.Join(home, ".ssh", "id_ed25519"): "PRIVATE KEY",
		filepath.Join(home, ".netrc"):             "machine x password hunter2",
		filepath.Join(data, "sidecar.db"):         "HISTORY",
	}
	for p, body := range secrets {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	b, err := NewBox(Config{Hidden: []string{data}})
	if err != nil {
		t.Fatal(err)
	}
	for p, body := range secrets {
		argv, err := b.Wrap(ws, []string{"cat", p})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if strings.Contains(string(out), body) {
			t.Errorf("%s readable in the sandbox: %q", p, out)
		}
	}
	_ = st
	// A workspace inside a hidden directory is not hidden: it is the work.
	inside := filepath.Join(data, "project")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	argv, _ := b.Wrap(inside, []string{"sh", "-c", "echo ok > f && cat f"})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = inside
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "ok\n" {
		t.Fatalf("workspace inside a hidden dir: %q %v", out, err)
	}
}

// TestBwrapDiesWithParent: when the process that started bwrap (the
// sidecar) is killed with SIGKILL, nothing of the sandbox survives, not
// even a process that left its session.
func TestBwrapDiesWithParent(t *testing.T) {
	st := bwrapOrSkip(t, false)
	marker := "888." + strconv.Itoa(os.Getpid())
	argv := Wrap(st, t.TempDir(), nil, []string{"sh", "-c", "setsid sleep " + marker + " & sleep " + marker + "1"})
	// The "sidecar": a shell that starts bwrap and waits.
	parent := exec.Command("sh", append([]string{"-c", `"$@" & wait`, "sh"}, argv...)...)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	sleeps := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil || !strings.HasPrefix(string(b), "sleep\x00"+marker) {
				continue
			}
			if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
				n++
			}
		}
		return n
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	poll("both sleeps to run", func() bool { return sleeps() == 2 })
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	poll("the sandbox to die with its parent", func() bool { return sleeps() == 0 })
}
