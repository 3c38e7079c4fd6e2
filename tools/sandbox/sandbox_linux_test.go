//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
