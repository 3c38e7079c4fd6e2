package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStoreKnowsNoEngine: the store offers neutral primitives; what an
// engine event does to durable state is the session host's one rule, so
// the store imports neither the engine nor the host.
func TestStoreKnowsNoEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zqagent/sidecar/store").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/zqagent/sidecar/engine", "github.com/zqagent/sidecar/ipc"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("store depends on %s", dep)
			}
		}
	}
}
