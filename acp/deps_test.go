package acp_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestACPUsesTheProtocol keeps the ACP front door a client of the sidecar's
// own API: it reaches sessions through ipc (its protocol and OnEngine seam),
// never the store, keychain, terminals or MCP directly, so that one rule
// lives in one place whichever front door a session is opened through.
func TestACPUsesTheProtocol(t *testing.T) {
	const m = deptest.Module
	const why = "acp reaches sessions through ipc"
	deptest.DepChecker{Direct: true, BadDeps: map[string]string{
		m + "/store": why, m + "/keychain": why, m + "/terminal": why, m + "/mcp/...": why,
		"modernc.org/sqlite/...": why, "database/sql": why,
	}}.Check(t)
}
