//go:build linux

package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/sandbox"
)

// TestSandboxedCommandCannotPlant runs run_shell through the session's
// sandbox (as the engine wires it): writing the project's .git/config or
// .agent/mcp.json fails and the files stay as they were.
func TestSandboxedCommandCannotPlant(t *testing.T) {
	box, err := sandbox.NewBox(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if st := box.Status(); !st.Enforced {
		t.Skipf("no working bwrap here: %s", st.Reason)
	}
	var f *fixture
	f = newFixture(t, Options{Wrap: func(argv []string) ([]string, error) { return box.Wrap(f.dir, argv) }})
	files := map[string]string{".git/config": "[core]\n", ".agent/mcp.json": "{}\n"}
	for name, body := range files {
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{
		`printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> .git/config`,
		`echo '{"mcpServers":{"x":{"command":"touch"}}}' > .agent/mcp.json`,
	} {
		if r := f.run(t, map[string]any{"command": cmd}); r.ExitCode == 0 {
			t.Errorf("%s: exit 0 in the sandbox: %q", cmd, r.Output)
		}
	}
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(f.dir, name)); err != nil || string(b) != body {
			t.Errorf("%s changed: %q %v", name, b, err)
		}
	}
	if r := f.run(t, map[string]any{"command": "echo ok > built.txt"}); r.ExitCode != 0 {
		t.Fatalf("a workspace write failed: %+v", r)
	}
}

// TestSandboxRequiredRefuses: when Wrap refuses (required, unavailable),
// the command does not run and the tool says why.
func TestSandboxRequiredRefuses(t *testing.T) {
	f := newFixture(t, Options{Wrap: func([]string) ([]string, error) {
		return nil, fmt.Errorf("run command: %w: test", sandbox.ErrUnavailable)
	}})
	marker := filepath.Join(f.dir, "ran")
	_, err := f.call(context.Background(), t, "run_shell", map[string]any{"command": "touch " + marker})
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("run_shell with a refused sandbox: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without the required sandbox")
	}
}

// TestSandboxedTaskKill: bwrap runs the command in a session of its own
// (--new-session), out of the task's process group; shell_task_kill still
// ends all of it (bwrap is in the group, and its pid namespace dies with
// it), including a process the command put in yet another session.
func TestSandboxedTaskKill(t *testing.T) {
	box, err := sandbox.NewBox(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if st := box.Status(); !st.Enforced {
		t.Skipf("no working bwrap here: %s", st.Reason)
	}
	var f *fixture
	f = newFixture(t, Options{Wrap: func(argv []string) ([]string, error) { return box.Wrap(f.dir, argv) }})
	marker := "999." + strconv.Itoa(os.Getpid())
	id := f.startBG(t, "setsid sleep "+marker+" & sleep "+marker+"1; wait", nil)
	sleeps := func() int {
		n := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && strings.HasPrefix(string(b), "sleep\x00"+marker) && alive(atoi(e.Name())) {
				n++
			}
		}
		return n
	}
	pollUntil(t, "both sleeps to run", func() bool { return sleeps() == 2 })
	if _, err := f.call(context.Background(), t, "shell_task_kill", map[string]any{"task_id": id}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "every process of the killed task to be gone", func() bool { return sleeps() == 0 })
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
