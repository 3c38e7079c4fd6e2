package main

import (
	"log/slog"

	"golang.org/x/sys/unix"
)

// hardenProcess makes the process not dumpable: /proc/<pid>/environ, mem,
// maps and auxv become root's, so the commands the sidecar runs as the same
// user cannot read its environment or memory, and ptrace needs
// CAP_SYS_PTRACE (cmdline stays world-readable). Root's children still
// can read them: that is why secrets are also kept out of the environment
// (see takeSecrets). The process can no longer read those files of its own
// either, nor dump core.
func hardenProcess(log *slog.Logger) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		log.Warn("prctl(PR_SET_DUMPABLE, 0)", "err", err)
	}
}
