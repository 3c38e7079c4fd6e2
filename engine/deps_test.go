package engine_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestEngineStaysEmbeddable keeps the engine a plain library (SPEC §2): it
// must not import the sidecar's server or store, nor the concrete model
// provider, the proxy dialer or any tool package: the default wiring of
// those is package backend's (backend.NewEngine). Of the tools it keeps the
// registry and its contracts (package tools: Registry, Interactor, the
// sentinels); the permission engine reads the OS sandbox (sandbox), the
// shell that runs commands (shellcmd) and the workspace (confine), all
// top-level packages.
func TestEngineStaysEmbeddable(t *testing.T) {
	const m = deptest.Module
	deptest.DepChecker{
		Pkgs: []string{"./..."},
		BadDeps: map[string]string{
			m + "/ipc/...":                   "the server is above the engine",
			m + "/store":                     "the host records what the engine emits",
			m + "/backend":                   "the backend wires an engine; the engine does not wire itself",
			m + "/acp":                       "a front door",
			m + "/mcp/...":                   "MCP tools are registered by the host",
			m + "/terminal":                  "the terminal tools read PTYs through tools.TerminalSource",
			m + "/keychain":                  "the host resolves keys",
			m + "/llm/openai":                "the concrete provider is the backend's wiring; the engine takes an llm.Provider",
			m + "/netproxy":                  "the proxy dialer is the provider's",
			m + "/tools/...":                 "the builtin tools are the backend's wiring; the engine runs them through the registry",
			"github.com/coder/websocket/...": "no WebSocket in an embeddable engine",
			"modernc.org/sqlite/...":         "no SQLite in an embeddable engine",
			"database/sql":                   "no SQL in an embeddable engine",
		},
		Allow: map[string]string{m + "/tools": "the registry and the tools' contracts"},
	}.Check(t)
}
