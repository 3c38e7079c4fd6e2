package main

import (
	"log/slog"

	"golang.org/x/sys/unix"
)

// hardenProcess makes the process not dumpable: /proc/<pid>/environ, mem,
// cmdline and friends become owned by root, so the commands the sidecar
// runs as the same user cannot read its memory, and ptrace needs
// CAP_SYS_PTRACE. (Root's children still can: that is why secrets are
// also kept out of the environment; see takeSecrets.)
func hardenProcess(log *slog.Logger) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		log.Warn("prctl(PR_SET_DUMPABLE, 0)", "err", err)
	}
}
