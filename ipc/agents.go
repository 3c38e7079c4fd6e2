package ipc

import "github.com/zqagent/sidecar/backend"

// agentRoutes: agents.* (the backend's agents.go).
func agentRoutes() map[string]handler {
	return map[string]handler{
		"agents.list":   call((*backend.Backend).Agents),
		"agents.add":    call((*backend.Backend).AddAgent),
		"agents.update": call((*backend.Backend).UpdateAgent),
		"agents.remove": call((*backend.Backend).RemoveAgent),
	}
}
