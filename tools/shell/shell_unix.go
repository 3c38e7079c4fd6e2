//go:build !windows

package shell

import (
	"os"
	"os/exec"
	"path/filepath"
)

// defaultShell is $SHELL when it names an executable file, else /bin/sh.
func defaultShell() string {
	if s := os.Getenv("SHELL"); s != "" && filepath.IsAbs(s) {
		if fi, err := os.Stat(s); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return s
		}
	}
	return "/bin/sh"
}

// shellArgv is the argv that runs command with shell.
func shellArgv(shell, command string) []string {
	return []string{shell, "-c", command}
}

// platformCmd adjusts cmd for the OS before it starts; nothing on Unix.
func platformCmd(*exec.Cmd) {}
