// Package interact owns the interactive tools: ask_user, propose_plan and
// request_directory. Each hands its request to the engine's
// tools.Interactor (which emits ask_user_question, plan_proposed or
// directory_requested, persists the pending request and waits for
// request.respond) and returns the user's answer to the model. A granted directory is added to the session's
// confine.Workspace, so it becomes readable (and writable, if granted so)
// for that session only. The request shows the directory as it really is:
// its real path (symlinks resolved), whether it is outside the project and
// the link it was named through; the grant covers exactly that real path
// (confine.Workspace.GrantExact), never what a link points to later.
//
// The requests and answers (tools.Question, tools.DirRequest, ...) and the
// Interactor interface are package tools' vocabulary, so that the engine
// implements them without importing a tool package.
//
// Concurrency: the tools hold no state of their own; the Interactor and
// the Workspace must be safe for concurrent use. Interactive tools run one
// at a time (their class is ClassInteractive).
package interact
