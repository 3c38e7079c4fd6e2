package main

import (
	"log/slog"
)

// handedOverSecrets: Windows has no exec; see reexecWithout.
func handedOverSecrets() (env map[string]string, ok bool, err error) { return nil, false, nil }

// reexecWithout cannot replace the process image on Windows: secrets passed
// in the environment stay in the process's initial environment block
// (readable by processes of the same user). Shells should pass them on
// stdin (--secrets-stdin).
func reexecWithout(log *slog.Logger, _ map[string]string) {
	log.Debug("secrets came in the environment; on Windows pass them on stdin (--secrets-stdin) so that the process's environment block holds none")
}
