// Package terminaltools owns the terminal_list and terminal_read tools, which
// let the agent see the project's terminals through a tools.TerminalSource,
// and MemorySource (an in-memory TerminalSource for tests and for embedding
// without PTYs), which renders its output with terminal/termtext as the PTY
// terminals do.
//
// Isolation: the tools always pass the project id they were registered with
// to the source; a session can neither list nor read another project's
// terminals.
//
// Concurrency: the tools hold no state; MemorySource is safe for concurrent
// use.
package terminaltools
