// Package store keeps everything the sidecar must not lose in one SQLite
// database (modernc.org/sqlite, pure Go): projects, sessions, the per-session
// event log, the engine's checkpointed history, durable pending interactive
// requests, session grants, compaction state, settings, provider profiles and
// agent definitions. It is the only package that touches SQL. No API key is
// ever stored: no table has a column for one, and provider headers that carry
// credentials are refused.
//
// Layout: <dir>/zqagent.db (WAL) and <dir>/sessions/<id>/ for the bytes of a
// session's attachments and spilled tool results; rows only hold references.
//
// One Store per data directory: Open takes an exclusive lock on
// <dir>/zqagent.lock (released by Close, or by the OS when the process dies)
// and fails with ErrLocked when another process holds it.
//
// Concurrency: every write goes through one writer goroutine that owns the
// single write connection. Writes are queued on a bounded channel and the
// writer commits whatever is queued in one transaction (group commit), so a
// streaming turn's deltas do not cost one fsync each and concurrent sessions
// never see SQLITE_BUSY. Within a session, seq starts at 1 and is strictly
// increasing and gap-free: the writer alone assigns it. Completion callbacks
// (Enqueue's done) run on the writer goroutine after the commit, in enqueue
// order; they must be fast and must not call the Store's write methods.
// Reads use a separate pool of read-only connections and see only committed
// data. Every connection gets its pragmas (WAL, busy_timeout, foreign_keys,
// synchronous=NORMAL) through the DSN. Close flushes the queue, waits for the
// writer and closes both pools.
//
// Event semantics: every event is kept (deltas are not folded), so replay
// from any seq is gap-free. A checkpoint (EventInput.History) is written in
// the same transaction as its event, so history and events never disagree.
// The store never decides from an event's type what else it does: the
// EventInput says so (Status, Pending, ClosePending, CountTask, Title,
// Dequeue), and the session host's one rule fills it in. Status is the
// host's turn state, kept as a word; the turn queue holds acknowledged
// turns until the event that starts them. The store imports no engine.
package store
