// Package shellcmd owns the one shell that runs the agent's commands
// (run_shell and its background tasks): which program it is (Interpreter,
// picked once per process), the argv that runs a command with it (Argv,
// Prepare) and the mvdan.cc/sh grammar to parse a command with to see what
// runs (Variant). The tool that runs commands (tools/shell) and the
// permission engine that decides on them (engine/permission) both read it
// here, so they never disagree on the shell; neither imports the other.
//
// The user's login shell is not this shell: it runs PTY terminals only
// (package terminal).
//
// Concurrency: every function is safe for concurrent use.
package shellcmd
