package ipc

import "github.com/zqagent/sidecar/backend"

// searchRoutes: search.* (the backend's websearch.go).
func searchRoutes() map[string]handler {
	return map[string]handler{
		"search.get": call((*backend.Backend).WebSearch),
		"search.set": call((*backend.Backend).SetWebSearch),
	}
}
