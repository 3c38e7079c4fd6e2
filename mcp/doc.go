// Package mcp connects a project to external Model Context Protocol tool
// servers (seed chapter 15) with github.com/mark3labs/mcp-go as the client.
//
// It owns the project's MCP configuration (<workspace>/.agent/mcp.json: every
// form the seed accepts, atomic saves that keep unknown fields), the trust of
// its servers (trust.go: the file comes with the repository, so a server is
// never started or contacted until the user approved its exact config, by
// Hash, kept in a TrustStore outside the project; ${VAR} references stay as
// written until a trusted server connects, and the sidecar's secrets never
// expand), the connections (stdio children in their own process group with a
// sanitized environment, streamable HTTP, SSE, and in-process builtin presets
// such as OCR), the registration of the servers' tools into tools.Registry as
// mcp__<server>__<tool>, lazy loading through two meta tools when a project
// has many tools, a debounced watch of the config file, and the servers'
// elicitations (elicit.go: checked, then asked of the user through the
// tools.Elicitor of the tool call they belong to, else declined).
//
// Permissions: every server tool's spec carries its grant key
// tools.MCPGrant(server, tool), "mcp:<server>/<tool>", and the generic
// mcp_call_tool is a dispatcher (tools.Spec.Dispatch): the engine resolves
// its call to the named tool's spec and arguments before any decision, so
// the card, the decision and an always_tool grant are the real tool's,
// whichever way it was called.
//
// Concurrency: a Manager is safe for concurrent use. Its mutex guards the
// configs, the per-server state, the cached approvals and the attached
// registries; it is never held while talking to a server (connect, list, call,
// close), so a slow server does not block status queries or other servers.
// Goroutines the Manager starts (stderr readers of stdio children, the file
// watcher) are tracked in a WaitGroup; CloseAll stops them and waits. A state
// change queues its status under the mutex, in the same critical section; the
// queue is handed to OnStatus in order, without the mutex, and Status hands it
// over before returning, so nobody sees a state before its notification was
// sent. Approval writes to the TrustStore run under a separate trust lock
// (taken before the mutex), never under the mutex. A file lock (taken
// first) makes an Edit (config edits and the save of the file) and a
// watcher reload (read, then apply) one step each: a reload that comes
// during an Edit is put off, so a file read before a save never undoes it.
//
// A server's status, its trust card and a config file's warnings are the
// wire's types (protocol.MCPStatus, protocol.MCPRun, protocol.MCPWarning),
// and a config entry on the wire (protocol.MCPServerConfig, raw JSON) is
// decoded in one place, ParseServer.
package mcp
