// Package interact owns the interactive tools: ask_user, propose_plan and
// request_directory. Each hands its request to the engine's Handlers (which
// emit ask_user_question, plan_proposed or directory_requested, persist the
// pending request and wait for request.respond) and returns the user's
// answer to the model. A granted directory is added to the session's
// confine.Workspace, so it becomes readable (and writable, if granted so)
// for that session only.
//
// Concurrency: the tools hold no state of their own; the Handlers and the
// Workspace must be safe for concurrent use. Interactive tools run one at a
// time (their class is ClassInteractive).
package interact
