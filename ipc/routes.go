package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/zqagent/sidecar/ipc/wsrpc"
)

// handler serves one method. ctx ends when the connection ends; params is
// the raw params member (nil when absent), valid only until the handler
// returns (it aliases the frame: see wsrpc.Handler). A handler decodes params with
// decodeParams and returns errors wrapping the package's sentinels.
type handler func(ctx context.Context, c *conn, params json.RawMessage) (any, error)

// transport adapts a handler to the transport's method table.
func (h handler) transport() wsrpc.Handler {
	return func(ctx context.Context, wc *wsrpc.Conn, params json.RawMessage) (any, error) {
		return h(ctx, connOf(wc), params)
	}
}

// routeGroups lists the method tables; each file that serves methods
// contributes one function here. Adding a group is one line.
func (s *Server) routeGroups() []map[string]handler {
	return []map[string]handler{
		s.lifecycleRoutes(), // lifecycle.go
		s.projectRoutes(),   // project.go
		s.sessionRoutes(),   // session_methods.go
		s.grantRoutes(),     // grant_methods.go
		s.turnRoutes(),      // turn_methods.go
		s.requestRoutes(),   // request_methods.go
		s.keyRoutes(),       // keys.go
		s.providerRoutes(),  // providers_methods.go
		s.agentRoutes(),     // agents.go
		s.vcsRoutes(),       // vcs_methods.go
		s.mcpRoutes(),       // mcp_methods.go
		s.terminalRoutes(),  // terminal_methods.go
		s.searchRoutes(),    // websearch.go
	}
}

// routeTable merges the groups into the transport's method table; a method
// defined twice is an error.
func (s *Server) routeTable() (map[string]wsrpc.Handler, error) {
	t := map[string]wsrpc.Handler{}
	for _, g := range s.routeGroups() {
		for m, h := range g {
			if _, dup := t[m]; dup {
				return nil, fmt.Errorf("route table: method %q defined twice", m)
			}
			t[m] = h.transport()
		}
	}
	return t, nil
}

// Methods lists the routed method names, sorted.
func (s *Server) Methods() []string { return slices.Sorted(maps.Keys(s.rpc.Methods)) }

// orderedMethods take effect in the order a connection sent them (the
// transport runs them one at a time, before reading on): keystrokes and
// resizes of a terminal, a session's turns and steering. Each only queues
// work, so none of them holds the connection's reader for long.
var orderedMethods = map[string]bool{
	"terminal.write":  true,
	"terminal.resize": true,
	"turn.start":      true,
	"turn.steer":      true,
	"turn.unsteer":    true,
}
