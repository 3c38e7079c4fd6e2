package vcs_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestVCSIsShared: vcs (checkpoints, restore, worktrees) is shared
// vocabulary the engine and the host use; it stores nothing itself and
// knows no session, so it imports neither of them nor the store.
func TestVCSIsShared(t *testing.T) {
	const m = deptest.Module
	deptest.DepChecker{
		Pkgs: []string{"./..."},
		BadDeps: map[string]string{
			m + "/engine/...": "the engine takes checkpoints through vcs",
			m + "/backend":    "the backend wires engines",
			m + "/ipc/...":    "the server is above vcs",
			m + "/acp":        "a front door",
			m + "/store":      "the host records checkpoints; vcs only makes them",
		},
	}.Check(t)
}
