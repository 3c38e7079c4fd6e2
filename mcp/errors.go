package mcp

import "errors"

// Sentinels of the package; callers match them with errors.Is.
var (
	// ErrUnknownServer: no config of that name.
	ErrUnknownServer = errors.New("unknown MCP server")
	// ErrDuplicateServer: AddConfig with a name that already exists.
	ErrDuplicateServer = errors.New("MCP server already exists")
	// ErrInvalidConfig: a config that cannot be used (no command, bad URL...).
	ErrInvalidConfig = errors.New("invalid MCP server config")
	// ErrDisabled: Connect on a disabled server.
	ErrDisabled = errors.New("MCP server is disabled")
	// ErrNotConnected: a call to a server that is not connected.
	ErrNotConnected = errors.New("MCP server is not connected")
	// ErrServerDied: the server's process or connection went away.
	ErrServerDied = errors.New("MCP server connection lost")
	// ErrClosed: the manager was closed.
	ErrClosed = errors.New("MCP manager closed")
	// ErrUnknownTool: mcp_call_tool named a tool no server has.
	ErrUnknownTool = errors.New("unknown MCP tool")
	// ErrToolFailed: the server answered the call with isError.
	ErrToolFailed = errors.New("MCP tool reported an error")
	// ErrUntrusted: a server whose config the user has not approved (or
	// that changed since); it is never started or contacted.
	ErrUntrusted = errors.New("MCP server config is not trusted")
	// ErrStaleHash: Trust with a hash that is not the current config's.
	ErrStaleHash = errors.New("MCP server config changed since it was shown")
	// ErrCommandLine: a command string that cannot be split into words.
	ErrCommandLine = errors.New("invalid command line")
)
