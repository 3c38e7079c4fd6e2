//go:build windows

package terminal

import (
	"strings"
	"testing"
)

// TestConPTYEchoAndExit runs on Windows CI: output through a real pseudo
// console, then the exit code.
func TestConPTYEchoAndExit(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"cmd.exe", "/d", "/c", "echo hello-conpty& exit /b 3"}})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	r.waitFor(t, "hello-conpty")
	if e := r.waitExit(t); e.ExitCode != 3 {
		t.Fatalf("exit code %d", e.ExitCode)
	}
}

// TestConPTYInteractive writes to cmd.exe and resizes the console.
func TestConPTYInteractive(t *testing.T) {
	m := newManager(t, Options{})
	in := create(t, m, CreateOptions{Command: []string{"cmd.exe", "/d", "/q"}})
	r, _ := subscribe(t, m, "p1", in.ID, 0)
	if err := m.Write("p1", in.ID, []byte("echo sum-%=1+1%\r\n")); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "sum-")
	if err := m.Resize("p1", in.ID, 120, 40); err != nil {
		t.Fatal(err)
	}
	if err := m.Kill("p1", in.ID); err != nil {
		t.Fatal(err)
	}
	r.waitExit(t)
	if strings.Contains(r.text(), "\x00") {
		t.Fatal("NUL in output")
	}
}
