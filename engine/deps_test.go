package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineStaysEmbeddable keeps the engine a plain library: it must not
// import the sidecar's server or store (SPEC §2).
func TestEngineStaysEmbeddable(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zqagent/sidecar/engine").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/zqagent/sidecar/ipc", "github.com/zqagent/sidecar/store", "github.com/coder/websocket", "modernc.org/sqlite"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("engine depends on %s", dep)
			}
		}
	}
}
