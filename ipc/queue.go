package ipc

import "github.com/zqagent/sidecar/backend"

// queueRoutes: queue.* (the backend's queue_methods.go: the editable queue
// of turns that have not started).
func queueRoutes() map[string]handler {
	return map[string]handler{
		"queue.list":   call((*backend.Backend).QueueList),
		"queue.update": call((*backend.Backend).QueueUpdate),
		"queue.move":   call((*backend.Backend).QueueMove),
		"queue.remove": call((*backend.Backend).QueueRemove),
	}
}
