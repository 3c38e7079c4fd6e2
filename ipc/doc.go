// Package ipc is the sidecar's local WebSocket JSON-RPC 2.0 front door:
// transport glue and thin handlers over package backend. It composes the
// transport (ipc/wsrpc: upgrade checks, connections, framing, bounded
// queues, wire errors) and the backend (package backend: projects,
// sessions, turns and their policy, requests, grants, MCP, terminals,
// providers, agents and everything else the methods do), and it owns no
// state of its own but its connections.
//
// Layout: server.go is the composition (New, Options, Serve, Close, the
// broadcast the backend's notifications go through); routes.go is the one
// decoding adapter (route, call, routeDecoded: the params are decoded
// strictly into their protocol type, once, then the handler runs with the
// backend and the connection) and merges the method tables; each method
// group has one file with its table and its few handlers that need the
// connection (lifecycle.go, project.go, session.go, turn.go, providers.go,
// agents.go, vcs.go, mcp.go, terminal.go, search.go). A handler is
// func(ctx, *backend.Backend, *conn, protocol.XParams) (protocol.XResult,
// error), or a backend method routed by call. connstate.go is the server's
// state of a connection (its session subscriptions, the sessions it
// started turns in); turn_params.go decodes turn.start in place (its
// attachments are large); errmap.go adds the backend's and the hosted
// packages' sentinels (with their error.data kinds) to the one mapping
// (wsrpc.WireErrorOf) that turns an error into a JSON-RPC code and
// error.data. Params and results are the types of package protocol.
//
// Concurrency and delivery rules:
//   - Each connection has one reader goroutine, one writer goroutine fed by
//     a queue bounded in bytes, and one goroutine per in-flight request
//     (requests of one connection are handled concurrently); see ipc/wsrpc.
//     A request's ctx ends when its connection ends. Responses and
//     subscription pumps wait for room; broadcasts never wait (a connection
//     whose queue is full for one is closed, "fell behind"). The stall
//     watch closes a connection whose socket took no byte for WriteTimeout,
//     so a slow but steady reader keeps its connection. Memory never grows
//     without bound.
//   - Each session has at most one turn running; turn.start while one runs
//     is queued FIFO; an event reaches subscribers only after the store
//     committed it, in seq order; see package backend.
//   - session.subscribe and session.unsubscribe fence the connection's old
//     subscription of the session (conn.subMu) before they answer.
//
// Lock order: Server.mu is a leaf (conns, closed, httpSrv); conn.subMu
// before conn.mu; the backend's locks (see package backend) are never
// taken under them, except that session.subscribe holds conn.subMu across
// the backend's Subscribe. No lock is held while sending to a connection.
package ipc
