// Package ipc is the sidecar's local WebSocket JSON-RPC 2.0 server: it checks
// every upgrade (loopback Host, Origin allowlist, bearer or subprotocol token in
// constant time), routes requests through one method table, hosts one engine
// per session (loaded lazily from the store), records every engine event in the
// store and streams it to subscribers, and bridges the engine's approvals and
// questions to durable pending requests answered with request.respond.
//
// Layout: routes.go lists the method tables (one function per file that
// serves methods: lifecycle.go, project.go (with project_settings.go),
// session_methods.go, session_runtime.go, lang.go (session languages),
// grant_methods.go, turn_methods.go, request_methods.go, keys.go,
// providers_methods.go, agents.go, websearch.go, vcs_methods.go,
// mcp_methods.go and terminal_methods.go); respond_check.go checks answers
// against their request; mcp_project.go owns each open project's MCP manager,
// mcp_trust.go keeps its servers' approvals, and terminal_stream.go the terminal.output streams; a handler decodes
// its params with decodeParams, which names the bad field, and returns errors
// wrapping the sentinels of errors.go; wireError (errors.go, errmap.go) is the
// one place that turns an error into a JSON-RPC code. sessionhost.go owns a
// session's turn queue and runner and its one turn state (turnstate.go:
// the state machine, drawn there; durable.go: the one rule of what each
// event does to durable state, and the recovery at start), subscribe.go the delivery to subscribers,
// bridge.go the durable approvals and questions, engineload.go and
// build_engine.go the lazy engine construction, provider.go the choice of
// model provider.
//
// Concurrency and delivery rules:
//   - Each connection has one reader goroutine, one writer goroutine fed by a
//     queue bounded in bytes (sendqueue.go), and one goroutine per in-flight
//     request (requests of one connection are handled concurrently). Responses
//     and subscription pumps wait for room; broadcasts never wait (a
//     connection whose queue is full for one is closed, "fell behind"). A
//     write has no per-frame deadline: the stall watch (progress.go) closes a
//     connection whose socket took no byte for WriteTimeout, so a slow but
//     steady reader keeps its connection. Memory never grows without bound.
//   - Each session has at most one turn running; turn.start while one runs is
//     queued FIFO. One goroutine per session (its runner) pulls the engine's
//     iterator and hands each event to the store's recorder; an event is sent
//     to subscribers only after the store committed it, in seq order.
//   - A subscription registers under the session lock at the last committed
//     seq, replays stored events up to it, then drains live events buffered
//     since: no gap, no duplicate. A subscriber whose bounded buffer fills is
//     dropped with a session.dropped notification and may re-subscribe from its
//     last seq; it never blocks the engine or other subscribers.
//
// Lock order: Server.mu before sessionHost.mu before subscription.mu;
// sessionHost.loadMu before Server.mu and sessionHost.mu. No lock is held
// while sending to a connection or calling the store or an engine, except
// the short subscribe registration, which only touches in-memory state;
// loadMu, which engine loading and the grant methods hold across their store
// and permission calls so that the two never interleave; and
// searchCache.mu, a leaf lock held across the one settings row it caches so
// that the cache never disagrees with the store.
package ipc
