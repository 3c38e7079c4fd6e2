//go:build unix

package fs

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zqagent/sidecar/confine"
)

// TestSpecialFiles: a FIFO (with no writer, so any blocking open would
// hang the test) and a socket in the repository are refused by every file
// tool with a clear error; a FIFO named .gitignore does not block
// list_files.
func TestSpecialFiles(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("a.txt"), "hello\n")
	for _, name := range []string{"pipe", ".gitignore", "sub/.gitignore"} {
		mkdir(t, filepath.Dir(e.path(name)))
		if err := syscall.Mkfifo(e.path(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sock := e.path("s.sock")
	if len(sock) < 100 { // sun_path is short
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	calls := []struct {
		name string
		args map[string]any
		kind string
	}{
		{"read_file", map[string]any{"path": "pipe"}, "named pipe"},
		{"list_files", map[string]any{"path": "pipe"}, "named pipe"},
		{"replace_in_file", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, "named pipe"},
		{"write_file", map[string]any{"path": "pipe", "content": "x"}, "named pipe"},
	}
	if len(sock) < 100 {
		calls = append(calls, struct {
			name string
			args map[string]any
			kind string
		}{"read_file", map[string]any{"path": "s.sock"}, "socket"})
	}
	for _, c := range calls {
		_, err := e.call(t, c.name, c.args)
		if !errors.Is(err, confine.ErrSpecialFile) || !strings.Contains(err.Error(), c.kind) {
			t.Errorf("%s %v: %v", c.name, c.args, err)
			continue
		}
		requireType(t, err, TypeSpecial)
	}
	out := e.mustCall(t, "list_files", map[string]any{"depth": 3}).(string)
	if !strings.Contains(out, "a.txt") || !strings.Contains(out, "sub/") {
		t.Fatalf("list_files over FIFO .gitignore files:\n%s", out)
	}
	if got := read(t, e.path("a.txt")); got != "hello\n" {
		t.Fatal(got)
	}
}
