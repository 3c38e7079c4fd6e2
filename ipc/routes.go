package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

// handler serves one method. ctx ends when the connection ends; params is
// the raw params member (nil when absent), valid only until the handler
// returns (it aliases the frame: see wsrpc.Handler). Handlers are made by
// route, call or routeDecoded, never written against raw params.
type handler func(ctx context.Context, c *conn, params json.RawMessage) (any, error)

// route adapts a thin handler: the params are decoded strictly into P
// (protocol.DecodeParams: absent params are {}, a bad field is named), then
// h runs with the backend and the connection.
func route[P, R any](h func(ctx context.Context, b *backend.Backend, c *conn, p P) (R, error)) handler {
	return routeDecoded(decodeStrict[P], h)
}

// call routes a method straight to a backend method that needs nothing of
// the connection: "agents.add": call((*backend.Backend).AddAgent).
func call[P, R any](m func(b *backend.Backend, ctx context.Context, p P) (R, error)) handler {
	return route(callOf(m))
}

// callOf is a backend method in the shape of a thin handler.
func callOf[P, R any](m func(b *backend.Backend, ctx context.Context, p P) (R, error)) func(context.Context, *backend.Backend, *conn, P) (R, error) {
	return func(ctx context.Context, b *backend.Backend, _ *conn, p P) (R, error) { return m(b, ctx, p) }
}

// routeDecoded is route with its own decoder (turn.start decodes in place).
func routeDecoded[P, R any](decode func(json.RawMessage) (P, error), h func(ctx context.Context, b *backend.Backend, c *conn, p P) (R, error)) handler {
	return func(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
		p, err := decode(raw)
		if err != nil {
			return nil, err
		}
		r, err := h(ctx, c.s.b, c, p)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

func decodeStrict[P any](raw json.RawMessage) (P, error) {
	var p P
	err := protocol.DecodeParams(raw, &p)
	return p, err
}

// routeGroups lists the method tables; each file that serves methods
// contributes one function here. Adding a group is one line.
func routeGroups() []map[string]handler {
	return []map[string]handler{
		lifecycleRoutes(), // lifecycle.go
		projectRoutes(),   // project.go
		sessionRoutes(),   // session.go
		turnRoutes(),      // turn.go
		queueRoutes(),     // queue.go
		providerRoutes(),  // providers.go
		agentRoutes(),     // agents.go
		vcsRoutes(),       // vcs.go
		mcpRoutes(),       // mcp.go
		terminalRoutes(),  // terminal.go
		searchRoutes(),    // search.go
		filesRoutes(),     // files.go
	}
}

// routeTable merges the groups into the transport's method table; a method
// defined twice is an error.
func routeTable() (map[string]wsrpc.Handler, error) {
	t := map[string]wsrpc.Handler{}
	for _, g := range routeGroups() {
		for m, h := range g {
			if _, dup := t[m]; dup {
				return nil, fmt.Errorf("route table: method %q defined twice", m)
			}
			t[m] = func(ctx context.Context, wc *wsrpc.Conn, params json.RawMessage) (any, error) {
				return h(ctx, connOf(wc), params)
			}
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
	"queue.update":    true,
	"queue.move":      true,
	"queue.remove":    true,
}
