package wsrpc_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTransportKnowsNoSessions keeps the transport a transport: it depends
// on no engine, store, session host or server package of the sidecar.
func TestTransportKnowsNoSessions(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zqagent/sidecar/ipc/wsrpc").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if !strings.HasPrefix(dep, "github.com/zqagent/sidecar") {
			continue
		}
		if dep != "github.com/zqagent/sidecar/ipc/wsrpc" {
			t.Errorf("wsrpc depends on %s", dep)
		}
	}
}
