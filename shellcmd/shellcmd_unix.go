//go:build !windows

package shellcmd

import (
	"os"
	"os/exec"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// interpreter picks the shell once per process, so that the permission
// engine's parser and the runner never disagree.
var interpreter = sync.OnceValue(func() string {
	if fi, err := os.Stat("/bin/bash"); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return "/bin/bash"
	}
	return "/bin/sh"
})

// Interpreter is the one shell that runs every run_shell command and
// background task: /bin/bash when it exists (the permission engine parses
// commands with mvdan.cc/sh's bash grammar), else /bin/sh. Never $SHELL:
// the user's login shell (fish, zsh, ...) runs PTY terminals only.
func Interpreter() string { return interpreter() }

// Variant is the mvdan.cc/sh grammar of Interpreter: syntax.LangBash for
// bash, syntax.LangPOSIX for sh. Parse commands with it to see what runs.
func Variant() syntax.LangVariant {
	if Interpreter() == "/bin/bash" {
		return syntax.LangBash
	}
	return syntax.LangPOSIX
}

// Argv is the argv that runs command with shell.
func Argv(shell, command string) []string {
	return []string{shell, "-c", command}
}

// Prepare adjusts cmd for the OS before it starts; nothing on Unix.
func Prepare(*exec.Cmd) {}
