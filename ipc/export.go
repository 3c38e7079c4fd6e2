package ipc

import "github.com/zqagent/sidecar/backend"

// sessionFileRoutes: session.export and session.import (the backend's
// export.go: a session as one file).
func sessionFileRoutes() map[string]handler {
	return map[string]handler{
		"session.export": call((*backend.Backend).ExportSession),
		"session.import": call((*backend.Backend).ImportSession),
	}
}
