package tools_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestToolsKnowNoSessions: the tool registry and the builtin tools are
// run by the engine and wired by the backend; they reach the host only through
// the interfaces they declare (tools.Interactor, tools.TerminalSource), so
// they import neither the engine, the store, the server, MCP nor the
// packages that implement those interfaces.
func TestToolsKnowNoSessions(t *testing.T) {
	const m = deptest.Module
	deptest.DepChecker{
		Pkgs: []string{"./..."},
		BadDeps: map[string]string{
			m + "/engine/...":   "the engine runs the tools, not the other way round",
			m + "/backend":      "the backend wires the tools into an engine",
			m + "/store":        "a tool's durable state goes through the engine's events",
			m + "/ipc/...":      "the server is above the engine",
			m + "/acp":          "a front door",
			m + "/mcp/...":      "MCP tools register beside the builtin ones",
			m + "/terminal":     "the terminal tools read the host's PTYs through tools.TerminalSource",
			m + "/keychain":     "no tool sees a key",
			m + "/protocol/...": "tools speak llm's vocabulary, not the wire's",
		},
	}.Check(t)
}
