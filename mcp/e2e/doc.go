// Package e2e holds the end-to-end test of the mcp package: an MCP tool of
// @modelcontextprotocol/server-everything called by a real engine turn, with
// the user's approval. It is a separate package so that the mcp package's
// own tests do not depend on the engine. It has no non-test code.
package e2e
