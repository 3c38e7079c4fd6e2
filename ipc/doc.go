// Package ipc is the sidecar's local WebSocket JSON-RPC 2.0 server: it
// composes the transport (ipc/wsrpc: upgrade checks, connections, framing,
// bounded queues, wire errors), the session host (backend: sessions, turn
// queues and runners, subscriptions, durable approvals and questions, lazy
// engines) and the method handlers of this package, which decode params,
// call the store, the host and the other packages, and answer.
//
// Layout: server.go is the composition (New, Options, Serve, Close);
// routes.go lists the method tables (one function per file that serves
// methods: lifecycle.go, project.go (with project_settings.go),
// session_methods.go, session_runtime.go, lang.go (session languages),
// grant_methods.go, turn_methods.go, request_methods.go, keys.go,
// providers_methods.go, agents.go, websearch.go, vcs_methods.go,
// mcp_methods.go and terminal_methods.go) and adapts them to the
// transport's Handler; connstate.go is the server's state of a connection
// (its session subscriptions, the sessions it started turns in);
// respond_check.go checks answers against their request; mcp_project.go
// owns each open project's MCP manager, mcp_trust.go keeps its servers'
// approvals, mcp_session.go the servers a client gives one session
// (mcp.sessionAdd: bound to that connection, never stored), and
// terminal_stream.go the terminal.output streams. A handler
// decodes its params with decodeParams (wire.go: the transport's, which
// names the bad field) and returns errors wrapping the sentinels of
// wire.go; errmap.go adds the hosted packages' sentinels (with their
// error.data kinds) to the one mapping (wsrpc.WireErrorOf) that turns an
// error into a JSON-RPC code and error.data. Params and results are the
// types of package protocol (the wire's vocabulary, from which
// protocol/schema.json is generated); the conversions from the store's, the
// engine's and the other packages' types happen in the handlers.
// engines.go is the host's Engines: it builds a session's engine
// (build_engine.go: the default wiring of package agent with the server's
// search backend and terminals; provider.go: the choice of model provider)
// and attaches MCP and Options.OnEngine to it.
//
// Concurrency and delivery rules:
//   - Each connection has one reader goroutine, one writer goroutine fed by
//     a queue bounded in bytes, and one goroutine per in-flight request
//     (requests of one connection are handled concurrently); see ipc/wsrpc.
//     Responses and subscription pumps wait for room; broadcasts never wait
//     (a connection whose queue is full for one is closed, "fell behind").
//     The stall watch closes a connection whose socket took no byte for
//     WriteTimeout, so a slow but steady reader keeps its connection.
//     Memory never grows without bound.
//   - Each session has at most one turn running; turn.start while one runs
//     is queued FIFO; an event reaches subscribers only after the store
//     committed it, in seq order; a subscription replays, then streams live
//     events with no gap and no duplicate, and a subscriber that falls
//     behind is dropped with session.dropped; see backend.
//   - session.subscribe and session.unsubscribe fence the connection's old
//     subscription of the session (conn.subMu) before they answer.
//
// Lock order: Server.mu, then host.Sessions.mu, then host.Session.mu,
// then the subscription's lock; host.Session.loadMu (LockLoad) before
// Server.mu and host.Session.mu; conn.subMu before conn.mu. No lock is
// held while sending to a connection or calling the store or an engine,
// except the short subscribe registration, which only touches in-memory
// state; loadMu, which engine loading and the grant methods hold across
// their store and permission calls so that the two never interleave; and
// searchCache.mu, a leaf lock held across the one settings row it caches
// so that the cache never disagrees with the store.
package ipc
