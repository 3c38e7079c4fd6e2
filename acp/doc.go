// Package acp is the sidecar's second front door: it speaks the Agent Client
// Protocol (ACP v1, github.com/coder/acp-go-sdk) over stdin/stdout, so that
// editors (Zed, JetBrains, …) host the same agent, with the same data dir,
// store, keychain, provider profiles, trust rules and permission engine as
// the WebSocket sidecar.
//
// It owns no session state of its own. Serve hosts an ipc.Server on a
// private loopback port (or, when another sidecar already owns the data
// dir, joins that one) and drives it as a client of the WebSocket protocol
// (ipc/client), in protocol's types (params, results and event data alike):
// session/new is project.open + session.create, session/prompt
// is turn.start, session/cancel is turn.interrupt, session/set_mode is
// session.setMode, session/fork (unstable) is session.fork, each usage
// event is a usage_update (unstable), and every approval, plan and
// directory request is a session/request_permission whose answer goes back
// as request.respond.
// Sessions are therefore the same rows, events and pending requests whichever
// front door opened them.
//
// Which of the two it does is the data dir's lock's decision, taken by the
// caller (cmd/sidecar, Options.Connect): the lock holder owns the store, and
// publishes its endpoint for the other front door. The decision is taken
// again when the backend goes: the joined sidecar quit (the caller takes
// the lock or joins whoever did), or the hosted server was asked to let the
// data dir go (its shutdown method: Serve closes it, which suspends the
// turns that wait for an answer, and the caller joins the new owner). The
// editor's sessions outlive the change: Serve subscribes to them again from
// the last seq handled, the Agent's methods wait for the next connection
// (client), and an answer given meanwhile goes to it (respond).
//
// Layout: serve.go starts and stops the parts; errors.go has the sentinels
// and wireError, the one mapping of errors to ACP errors; agent.go the ACP
// Agent methods and the questions to the editor; session.go routes one
// session's events (replay on session/load, live updates, the end of each
// prompt); updates.go maps session events to ACP session updates (usage.go
// a usage event to its usage_update) and permission.go our approval
// outcomes to ACP permission options and our modes to ACP session modes,
// all pure functions; fork.go serves session/fork and says which session
// capabilities the backend has; mcp.go gives the
// editor's MCP servers (mcpServers) to the session (mcp.sessionAdd) and
// asks the user before any of them starts; fs.go routes read_file and
// write_file through the editor's fs/* methods when it offers them (hosted
// mode only: the engine must run in this process).
//
// Concurrency: one dispatcher goroutine reads the ipc client's
// notifications in order and turns each session's events into
// session/update notifications, so updates keep the store's seq order;
// questions to the editor (request_permission) run on their own tracked
// goroutines so that the dispatcher never waits for the user. Prompt waits
// for its turn's turn_end, which the dispatcher hands it through the
// session. An editor that stops reading stdout holds the dispatcher; the
// sidecar's server then drops this client as it drops any slow one, and
// Serve returns that error: nothing is buffered without bound. Serve waits
// for every goroutine it started before it returns.
package acp
