package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestE2EAbbreviatedOptionsAsk (issue 14): with the programs allowlisted,
// option spellings the program itself accepts as abbreviations of a
// refused option, and interpreters' module flags, are asked, never run
// unasked. The test denies each card; no marker appears.
func TestE2EAbbreviatedOptionsAsk(t *testing.T) {
	dir := t.TempDir()
	m := func(name string) string { return filepath.Join(dir, name) }
	attempts := []string{
		"sort --outp=" + m("sort") + " /dev/null",
		"git ls-remote --upload=" + "'touch " + m("git") + "' .",
		`python3 -m timeit "__import__('os').system('touch ` + m("python") + `')"`,
		"tar --to-com='touch " + m("tar") + "' -xf /dev/null",
	}
	var responses []map[string]any
	for i, a := range attempts {
		responses = append(responses, calls("", toolCall(fmt.Sprintf("c%d", i), "run_shell", map[string]string{"command": a})), text("denied"))
	}
	e := setup(t, writeScript(t, responses...), map[string]any{"allowedCommands": []string{"sort", "git", "python3", "tar"}})
	for i, a := range attempts {
		_, err := e.c.StartTurn(tctx(t), e.sid, fmt.Sprintf("try %d", i))
		require.NoError(t, err)
		evs := untilType(t, e.c, e.sid, "permission_required")
		card := dataOf(t, evs[len(evs)-1])
		require.Contains(t, string(mustJSON(t, card)), "run_shell", a)
		require.NoError(t, e.c.Respond(tctx(t), e.sid, card["requestId"].(string), map[string]string{"outcome": "deny"}))
		untilType(t, e.c, e.sid, "turn_end")
	}
	for _, n := range []string{"sort", "git", "python", "tar"} {
		require.NoFileExists(t, m(n), n)
	}
}

// TestE2EShellIsNotUsersShell (issue 14): run_shell never runs $SHELL (the
// permission engine parses bash grammar; a fish $SHELL would read the
// command differently). A fake $SHELL that leaves a marker never runs.
func TestE2EShellIsNotUsersShell(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "fish-ran")
	fake := filepath.Join(dir, "fish")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\ntouch "+marker+"\nexec /bin/sh \"$@\"\n"), 0o755))
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]string{"command": "echo from-the-fixed-shell"})),
		text("done"),
	)
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: filepath.Join(t.TempDir(), "proj")}
	require.NoError(t, os.MkdirAll(e.projDir, 0o755))
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script, "SHELL="+fake)
	e.c = e.p.connect(t)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	e.sid, err = e.c.CreateSession(tctx(t), pid, map[string]any{"allowedCommands": []string{"echo"}})
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	_, err = e.c.StartTurn(tctx(t), e.sid, "run")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "echo is allowlisted")
	fin := dataOf(t, ofType(evs, "tool_finished")[0])
	require.Equal(t, "ok", fin["status"])
	require.Contains(t, fin["result_preview"], "from-the-fixed-shell")
	require.NoFileExists(t, marker, "the user's $SHELL ran the command")
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
