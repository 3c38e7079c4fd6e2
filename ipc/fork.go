package ipc

import "github.com/zqagent/sidecar/backend"

// forkRoutes: session.fork (the backend's fork.go).
func forkRoutes() map[string]handler {
	return map[string]handler{
		"session.fork": call((*backend.Backend).ForkSession),
	}
}
