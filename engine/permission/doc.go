// Package permission owns the decision whether a tool call may run: the
// seed's PermissionEngine (§8.1–8.5). Evaluate applies the eight steps in a
// fixed order — read-only modes, workspace boundary, read-only risk, AUTO
// mode, shellPolicy (with the OS sandbox), the command allowlist and session
// command grants, session tool grants, and finally "ask the user". It also
// owns the command-line matcher that decides whether a run_shell command is a
// single literal simple command safe to auto-allow (parsed with a real shell
// parser, mvdan.cc/sh, in its bash grammar: run_shell runs bash, else
// /bin/sh), the per-program argument rules that match how each program
// parses its options (options.go: known-safe option lists, refused options
// in every abbreviation; git.go, interp.go, runners.go), what an allowlist
// entry or a grant covers (coverage.go: naming only git, npm, go, ... covers
// their read-only subcommands), the writes that always ask (.agent/mcp.json,
// .git), the approver types and fallbacks, and the session grants
// themselves (SessionGrants with when each was given, RestoreGrant,
// RevokeGrant; CommandGrant says what an always_command grant would cover,
// or why none is offered).
//
// Concurrency: an Engine is safe for concurrent use. One mutex guards the
// mutable state (mode, shell policy, allowlist and session grants); Evaluate
// takes a snapshot under the lock and does its file-system checks without it.
package permission
