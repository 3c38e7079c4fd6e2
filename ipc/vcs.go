package ipc

import "github.com/zqagent/sidecar/backend"

// vcsRoutes: vcs.* (the backend's vcs_methods.go).
func vcsRoutes() map[string]handler {
	return map[string]handler{
		"vcs.turns":   call((*backend.Backend).VCSTurns),
		"vcs.diff":    call((*backend.Backend).VCSDiff),
		"vcs.restore": call((*backend.Backend).VCSRestore),
	}
}
