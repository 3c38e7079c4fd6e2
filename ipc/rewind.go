package ipc

import "github.com/zqagent/sidecar/backend"

// rewindRoutes: session.rewind (the backend's rewind.go: the history, and
// with files the workspace, back to just before a turn).
func rewindRoutes() map[string]handler {
	return map[string]handler{
		"session.rewind": call((*backend.Backend).SessionRewind),
	}
}
