package backend_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBackendKnowsNoTransport keeps the session host below the server: it
// reaches subscribers through its Sink interface and engines through
// Engines, so it imports neither the WebSocket library nor the transport,
// the server (ipc) or its handlers.
func TestBackendKnowsNoTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zqagent/sidecar/backend").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/coder/websocket", "github.com/zqagent/sidecar/ipc/wsrpc", "github.com/zqagent/sidecar/acp"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("backend depends on %s", dep)
			}
		}
		if dep == "github.com/zqagent/sidecar/ipc" {
			t.Errorf("backend depends on %s", dep)
		}
	}
}
