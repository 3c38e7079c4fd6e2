// Package backend is the sidecar's state and policy, behind every front
// door (the WebSocket server in ipc, the ACP front door through it): a
// Backend (backend.go; New, Start, Shut, Close) owns the open projects
// (project.go, project_settings.go, git trust in git_trust.go, worktrees
// in worktree_methods.go), the sessions and their settings
// (session_methods.go, session_runtime.go, lang.go for their languages),
// the turn policy (turn_methods.go: StartTurn, Interrupt, Retry, Resume,
// Steer; request_methods.go: Respond, with respond_check.go checking an
// answer against its request; grant_methods.go), the MCP servers of each
// project and their trust (mcp_project.go, mcp_trust.go, mcp_methods.go)
// and those a client gives one session (mcp_session.go), the file
// watchers of the projects' ConflictGuards (watch_project.go), the
// terminals' output streams (terminal_methods.go, terminal_stream.go), the
// model provider and the models cache (provider.go, providers_methods.go,
// keys.go), each profile's prices and a session's stored usage totals
// (prices.go), agents (agents.go), the web_search backend (websearch.go), the
// attachments of turns (attachments.go) and the construction of each
// session's engine (engines.go fills EngineOptions from the store;
// wiring.go's NewEngine is the default wiring: provider, every builtin
// tool, ConflictGuard, permissions with the OS sandbox, the prompt). It
// knows no transport: clients are Sinks and Clients, a notification to all
// goes through Options.Broadcast and the envelope of every frame is the
// transport's (Options.Envelope; deps_test.go).
// Methods take and return the types of package protocol and fail with
// errors wrapping protocol's sentinels or this package's (errors.go).
//
// Sessions in this process: one Session
// per session (created on first use, sessionhost.go) owns its turn queue
// and the runner goroutine that pulls the engine's events and hands each to
// the store (durable.go; a stream's deltas coalesced, deltas.go), the delivery of committed events to subscribers
// (subscribe.go, eventframe.go), the durable approvals and questions that
// the engine's Approver and Interactor wait on (bridge.go), the lazy
// loading of its engine (engineload.go) through Engines, the
// explore subagent's forwarded events (subagent.go) and the naming of a
// session after its first turn (naming.go).
//
// Turn state: each Session has one TurnState (turnstate.go, where the
// machine is drawn), changed only in moveLocked, which checks the move and
// queues its durable copy (sessions.status) on the store's writer under
// the session lock — with the event that causes it (durable.go: the one
// rule of what each event does to durable state), or alone — so the store
// sees the moves in the order they were made. RecoverInterrupted settles
// what a dead process left. The turn Enqueue answers with 0 ahead is the
// current turn from that moment (push takes it under the lock, or hands it
// to a runner that is between turns): an interrupt stops it, never drops
// it. The rule that a tool runs at most once is the engine's, against the
// store's call ledger (Session.Ledger: engine.Ledger). session.get, session.list and subscribe's running read it; the
// engine only reports facts. Enqueue stores a turn in the durable queue
// before it answers; ResumeQueued runs the stored queue at start.
//
// Concurrency and delivery rules:
//   - Each session has at most one turn running; Enqueue while one runs
//     queues FIFO. One goroutine per session (its runner, tracked by
//     Config.WaitGroup) pulls the engine's iterator and hands each event to
//     the store's writer; an event is sent to subscribers only after the
//     store committed it, in seq order.
//   - A stream's deltas are coalesced, never delayed (deltas.go): a delta
//     is queued at once as an event the store seals when its writer
//     reaches it, and the deltas that arrive meanwhile join it. Any other
//     event of the session closes it first, so the log keeps the order.
//   - Subscribe registers under the session lock at the last committed seq;
//     Pump replays stored events up to it, then drains live events
//     buffered since: no gap, no duplicate. A subscriber whose bounded
//     buffer fills is dropped with a session.dropped notification and may
//     re-subscribe from its last seq; it never blocks the engine or other
//     subscribers.
//
// Lock order: Backend.mu is a leaf (open projects, closed); the service
// registries' locks (mcpProjects, sessionMCPs, termRegistry,
// projectWatchers) are leaves too, except searchCache.mu, held across the
// one settings row it caches so that the cache never disagrees with the
// store. Session.loadMu (lockLoad) before Backend.mu and Session.mu.
// Sessions.mu before Session.mu before Session.subMu before
// Subscription.mu; Session.loadMu (lockLoad) before Session.mu. Session.mu
// is held while an event or a status is queued on the store's writer (a
// non-blocking send unless the writer's queue is full); the writer's
// callbacks take only subMu, so this never deadlocks. No other lock is
// held while calling the store, an engine or a Sink, except the short
// Subscribe registration, and loadMu, which engine loading and the grant
// methods hold across their store and permission calls so that the two
// never interleave.
package backend
