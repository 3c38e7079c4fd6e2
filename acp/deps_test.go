package acp_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestACPUsesTheProtocol keeps the ACP front door a client of the sidecar's
// own API: it reaches sessions through ipc (its protocol and OnEngine seam),
// never the store, keychain, terminals or MCP directly, so that one rule
// lives in one place whichever front door a session is opened through.
func TestACPUsesTheProtocol(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, "github.com/zqagent/sidecar/acp").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, imp := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/zqagent/sidecar/store", "github.com/zqagent/sidecar/keychain", "github.com/zqagent/sidecar/terminal", "github.com/zqagent/sidecar/mcp", "modernc.org/sqlite", "database/sql"} {
			if imp == banned || strings.HasPrefix(imp, banned+"/") {
				t.Errorf("acp imports %s", imp)
			}
		}
	}
}
