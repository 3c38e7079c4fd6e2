package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bins holds the sidecar and zqchat binaries built once for the tests.
var bins string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zqchat-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins = dir
	for _, b := range [][2]string{{"sidecar", "../sidecar"}, {"zqchat", "."}} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1])
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", b[0]+":", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// chatRun runs zqchat on a fresh project and data dir with input on stdin
// and env added, and returns what it printed (without colours) and the
// project dir.
func chatRun(t *testing.T, input []string, env ...string) (out, projDir string) {
	t.Helper()
	dir := t.TempDir()
	projDir = filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bins, "zqchat"), "--sidecar", filepath.Join(bins, "sidecar"),
		"--data-dir", filepath.Join(dir, "data"), "--project", projDir)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+dir, "OPENAI_API_KEY=", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/zqchat-bus"), env...)
	cmd.Stdin = strings.NewReader(strings.Join(input, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out = ansi.ReplaceAllString(stdout.String(), "")
	require.NoError(t, err, "zqchat: %s\nstdout:\n%s", stderr.String(), out)
	return out, projDir
}

func writeScript(t *testing.T, responses ...any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"responses": responses})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

func call(id, name string, args map[string]any) map[string]any {
	b, _ := json.Marshal(args)
	return map[string]any{"toolCalls": []any{map[string]any{"id": id, "name": name, "arguments": string(b)}}}
}

// TestChatCommandsApprovalsAndArguments: /help and the other commands; a
// file write asks with choices that fit it (no "always this command": "c"
// is not taken, the prompt asks again) and shows its arguments as written;
// a shell command offers "always echo"; a denial is denied.
func TestChatCommandsApprovalsAndArguments(t *testing.T) {
	content := "say \"hi\" & <bye>\nline 2"
	script := writeScript(t,
		call("c1", "write_file", map[string]any{"path": "notes.txt", "content": content}),
		call("c2", "run_shell", map[string]any{"command": `echo "a & b"`}),
		map[string]any{"text": "all done"},
	)
	out, proj := chatRun(t, []string{"/help", "/bogus", "/mode", "/grants", "write a note", "c", "y", "n", "/quit"},
		"ZQAGENT_SCRIPT="+script)

	for _, c := range commands {
		require.Contains(t, out, c.name, "/help lists it")
	}
	require.Contains(t, out, "unknown command /bogus; /help lists the commands")
	require.Contains(t, out, "mode: interactive")
	require.Contains(t, out, "no grants")

	write, shell, ok := strings.Cut(out[strings.Index(out, "? write_file"):], "? run_shell")
	require.True(t, ok, out)
	require.Contains(t, write, "path: notes.txt")
	require.Contains(t, write, "│ say \"hi\" & <bye>")
	require.Contains(t, write, "[a] always allow write_file in this session")
	require.NotContains(t, write, "[c]")
	require.Equal(t, 2, strings.Count(write, "your choice:"), "c is no choice for a write: asked again")
	require.Contains(t, write, "(type one of: y, a or n)")
	require.Contains(t, shell, `command: echo "a & b"`)
	require.Contains(t, shell, "[c] always allow echo commands in this session")
	require.Contains(t, shell, "✗ denied run_shell")
	require.Contains(t, out, "all done")
	for _, esc := range []string{`\u0026`, `\u003c`, `\"`} {
		require.NotContains(t, out, esc, "arguments are shown as written")
	}
	b, err := os.ReadFile(filepath.Join(proj, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, content, string(b))
}

// TestChatDemoEndsWithATerminalHint: with no key the demo answers; after
// its turn zqchat says what a terminal user does for a real model, and
// nothing there or in the demo names a protocol method.
func TestChatDemoEndsWithATerminalHint(t *testing.T) {
	out, _ := chatRun(t, []string{"hello", "y", "1", "/quit"}, "ZQAGENT_SCRIPT=")
	require.Contains(t, out, "provider demo")
	require.Contains(t, out, "That is the end of the demo")
	require.Contains(t, out, demoHint)
	require.NotContains(t, out, "keys.set")
	require.Contains(t, out, `You answered: "Explain the project layout"`)
}
