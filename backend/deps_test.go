package backend_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBackendKnowsNoTransport keeps the backend below the front doors: it
// reaches clients through its Sink and Client interfaces, so it imports
// neither the WebSocket library nor the transport (ipc/wsrpc), the server
// and its handlers (ipc) or the ACP front door.
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
		if dep == "github.com/zqagent/sidecar/ipc" || dep == "github.com/zqagent/sidecar/ipc/client" {
			t.Errorf("backend depends on %s", dep)
		}
	}
}
