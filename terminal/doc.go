// Package terminal owns the sidecar's pseudo-terminals: project-scoped PTYs
// that the UI shows in its terminal panel and that the agent reads through
// terminal_list / terminal_read (Manager implements tools.TerminalSource).
//
// A terminal is a shell (or a command) started on a PTY (creack/pty on Unix,
// ConPTY on Windows) in its own session, with a sanitized environment
// (proc.Env: no sidecar secrets, TERM=xterm-256color) and a working directory
// confined to its project. Every call names the project; a terminal of
// another project is reported as ErrNotFound, never revealed.
//
// Output. One reader goroutine per PTY appends everything the PTY produces to
// a bounded ring buffer (the scrollback). Seq is a byte offset in the
// terminal's output stream: Output.Seq is the offset of Data[0], so after an
// Output the subscriber holds the stream up to Seq+len(Data), and that is the
// afterSeq it passes to re-subscribe. Each subscription has its own goroutine
// that copies from the ring and calls the Subscriber, coalescing small reads
// for BatchInterval; a large backlog is sent at once. The reader never waits
// for a subscriber: a subscriber that lags more than SubscriberBuffer bytes
// (or whose bytes the ring already overwrote) is dropped with
// Dropped(terminalID, firstMissedSeq) and may subscribe again from that seq.
// Exit is sent once, after all output, and ends the subscription.
//
// Lifecycle. Kill sends SIGHUP and SIGTERM to the terminal's process group
// (on Linux to every process of its session), then SIGKILL after KillGrace,
// and forgets the terminal (its subscribers still get the remaining output
// and Exit). When the shell exits by itself the terminal stays listed as
// exited until Kill; whatever it left running in its session is killed once
// the output has drained or after KillGrace, so no process outlives its
// terminal.
//
// Concurrency: a Manager is safe for concurrent use. Lock order is
// Manager.mu before terminal.mu; no lock is held while a Subscriber method
// runs. Subscriber methods of one subscription are called from one goroutine,
// in order; they may block (only that subscription waits) but must return
// when the subscriber goes away, because Close waits for every goroutine.
package terminal
