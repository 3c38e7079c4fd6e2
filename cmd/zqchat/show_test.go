package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShowArgsAsWritten(t *testing.T) {
	args := map[string]any{
		"content": "say \"hi\" & <bye>\nline 2\nüñí",
		"path":    "notes/a b.txt",
		"force":   true,
		"lines":   []any{1.0, "x<y"},
	}
	got := showArgs(args, nil, "  ", 12)
	require.Equal(t, "  path: notes/a b.txt\n  content:\n    │ say \"hi\" & <bye>\n    │ line 2\n    │ üñí\n  force: true\n  lines: [1,\"x<y\"]", got)
	for _, esc := range []string{`\u0026`, `\u003c`, `\"hi\"`, `\n`} {
		require.NotContains(t, got, esc, "shown as written, not escaped")
	}
	require.Equal(t, `command: echo "a & b"`, oneLine(map[string]any{"command": `echo "a & b"`}, 160))
	require.Equal(t, "path: a.txt, content: one…", oneLine(map[string]any{"path": "a.txt", "content": "one\ntwo"}, 160))

	// A long block is cut.
	long := strings.Repeat("x\n", 30)
	require.Contains(t, showArgs(map[string]any{"content": long}, nil, "", 5), "… 25 more lines")
}

func TestShowArgsEscapesWhatCouldFoolATerminal(t *testing.T) {
	args := map[string]any{"command": "echo ok\x1b[2K\rrm -rf ~", "note": "a\u202eb\u200bc"}
	got := showArgs(args, nil, "", 12)
	require.NotContains(t, got, "\x1b")
	require.NotContains(t, got, "\r")
	require.NotContains(t, got, "\u202e")
	require.Contains(t, got, `echo ok\u{001B}[2K\u{000D}rm -rf ~`)
	require.Contains(t, got, `a\u{202E}b\u{200B}c`)
	// The engine's display form wins, marked.
	got = showArgs(args, map[string]string{"arguments.command": "ECHO-DISPLAY"}, "", 12)
	require.Contains(t, got, "command: ECHO-DISPLAY ⚠")
}

func TestApprovalChoicesFitTheRequest(t *testing.T) {
	keys := func(cs []choice) string {
		var k []string
		for _, c := range cs {
			k = append(k, c.key)
		}
		return strings.Join(k, "")
	}
	// A file write: no "always this command".
	w := approvalChoices("write_file", "", false)
	require.Equal(t, "yan", keys(w))
	require.NotContains(t, choicePrompt(w), "command")
	require.Contains(t, choicePrompt(w), "[a] always allow write_file in this session")
	// A shell command the event offers to allow always.
	s := approvalChoices("run_shell", "git", true)
	require.Equal(t, "ycan", keys(s))
	require.Contains(t, choicePrompt(s), "[c] always allow git commands in this session")
	require.Contains(t, choicePrompt(s), "[a] always allow every shell command in this session")
	// A shell command it does not (a pipe, sudo, …).
	require.Equal(t, "yan", keys(approvalChoices("run_shell", "", false)))

	for answer, want := range map[string]string{"y": "once", "YES": "once", " n ": "deny", "no": "deny", "a": "always_tool", "c": "always_command"} {
		got, ok := pickChoice(s, answer)
		require.True(t, ok, answer)
		require.Equal(t, want, got, answer)
	}
	_, ok := pickChoice(w, "c")
	require.False(t, ok, "c is no choice for a file write")
	_, ok = pickChoice(w, "")
	require.False(t, ok, "an empty answer is no choice")
}

func TestHelpListsEveryCommand(t *testing.T) {
	var b bytes.Buffer
	printHelp(&b)
	for _, c := range commands {
		require.Contains(t, b.String(), c.name)
		require.NotEmpty(t, c.help)
	}
	require.Contains(t, b.String(), "/exit")
	require.Contains(t, b.String(), "Ctrl-C")
}

func TestDemoHintNamesWhatATerminalUserCanDo(t *testing.T) {
	require.Contains(t, demoHint, "OPENAI_API_KEY=")
	require.Contains(t, demoHint, "make run")
	for _, notForHere := range []string{"keys.set", "settings", "initialize", "--secrets-stdin"} {
		require.NotContains(t, demoHint, notForHere)
	}
}
