package acp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestNodeClient drives `sidecar acp` with the official TypeScript client
// (@agentclientprotocol/sdk, testdata/node/acp.test.mjs): initialize, new
// session, approvals allowed once and rejected, a cancel mid-stream, the
// editor's fs/* methods, a plan, session/load after a restart, and a
// permission request whose command hides characters or a second line. It
// installs the client with `npm ci` when it is missing (scripts/deps.sh does
// too); without Node.js it skips, saying so.
func TestNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Node ACP client test (it builds the sidecar)")
	}
	if os.Getenv("ZQAGENT_SKIP_NPM") == "1" {
		t.Skip("ZQAGENT_SKIP_NPM=1: skipping the Node ACP client test")
	}
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Skipf("the ACP TypeScript client test needs Node.js 20+ and npm (node: %v, npm: %v)", nodeErr, npmErr)
	}
	dir := filepath.Join("testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk", "package.json")); err != nil {
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--silent")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s (no access to the npm registry?): %v\n%s", dir, err, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "sidecar")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, "../cmd/sidecar")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the sidecar: %v\n%s", err, out)
	}
	cmd := exec.Command(node, "--test", "--test-timeout=60000", "acp.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SIDECAR_BIN="+bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
