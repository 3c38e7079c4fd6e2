// Package host hosts the sidecar's sessions in this process: one Session
// per session (created on first use, sessionhost.go) owns its turn queue
// and the runner goroutine that pulls the engine's events and hands each to
// the store (record.go), the delivery of committed events to subscribers
// (subscribe.go, eventframe.go), the durable approvals and questions that
// the engine's Approver and Interactor wait on (bridge.go), the lazy
// loading of its engine (engineload.go) through the server's Engines, the
// explore subagent's forwarded events (subagent.go) and the naming of a
// session after its first turn (naming.go). It knows no transport:
// subscribers are Sinks, engines come from Engines (deps_test.go).
//
// Concurrency and delivery rules:
//   - Each session has at most one turn running; Enqueue while one runs
//     queues FIFO. One goroutine per session (its runner, tracked by
//     Config.WaitGroup) pulls the engine's iterator and hands each event to
//     the store's writer; an event is sent to subscribers only after the
//     store committed it, in seq order.
//   - Subscribe registers under the session lock at the last committed seq;
//     Pump replays stored events up to it, then drains live events
//     buffered since: no gap, no duplicate. A subscriber whose bounded
//     buffer fills is dropped with a session.dropped notification and may
//     re-subscribe from its last seq; it never blocks the engine or other
//     subscribers.
//
// Lock order: Sessions.mu before Session.mu before Subscription.mu;
// Session.loadMu (LockLoad) before Session.mu. No lock is held while
// calling the store, an engine or a Sink, except the short Subscribe
// registration, which only touches in-memory state, and loadMu, which
// engine loading and the grant methods hold across their store and
// permission calls so that the two never interleave.
package host
