//go:build windows

package shellcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/syntax"
)

// interpreter picks the shell once per process.
var interpreter = sync.OnceValue(defaultShell)

// Interpreter is the one program that runs every run_shell command and
// background task on Windows: the first of pwsh.exe and powershell.exe found
// on PATH, run with -NoLogo -NoProfile -NonInteractive -Command, else cmd.exe
// (%ComSpec%) with /d /s /c. Never %SHELL% or a Unix shell from MSYS or Git
// for Windows. No mvdan.cc/sh grammar matches PowerShell or cmd: the
// permission engine refuses Windows-special characters instead of parsing.
func Interpreter() string { return interpreter() }

// Variant is the grammar the permission engine parses with on Windows; it
// only approximates PowerShell and cmd (see Interpreter).
func Variant() syntax.LangVariant { return syntax.LangPOSIX }

// defaultShell is the first of pwsh, powershell and cmd found on PATH
// (cmd through %ComSpec% when set).
func defaultShell() string {
	for _, name := range []string{"pwsh.exe", "powershell.exe"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if c := os.Getenv("ComSpec"); c != "" {
		return c
	}
	return "cmd.exe"
}

// Argv is the argv that runs command with shell, by the shell's kind.
func Argv(shell, command string) []string {
	base := strings.ToLower(strings.TrimSuffix(filepath.Base(shell), filepath.Ext(shell)))
	switch base {
	case "pwsh", "powershell":
		return []string{shell, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", command}
	case "cmd":
		return []string{shell, "/d", "/s", "/c", command}
	default: // bash, sh, busybox from Git for Windows or MSYS
		return []string{shell, "-c", command}
	}
}

// Prepare gives cmd.exe its command line verbatim: Go's argument quoting
// follows CommandLineToArgvW, which cmd.exe does not parse, so `/s /c "..."`
// must be written by hand.
func Prepare(cmd *exec.Cmd) {
	a := cmd.Args
	if len(a) == 5 && strings.EqualFold(strings.TrimSuffix(filepath.Base(a[0]), filepath.Ext(a[0])), "cmd") && a[1] == "/d" && a[2] == "/s" && a[3] == "/c" {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.CmdLine = `"` + a[0] + `" /d /s /c "` + a[4] + `"`
	}
}
