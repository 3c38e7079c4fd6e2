package protocol_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProtocolIsALeaf: protocol is the vocabulary every layer speaks, so it
// imports nothing but the standard library (its generator and validator,
// under internal/ and validate/, are separate packages).
func TestProtocolIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/zqagent/sidecar/protocol").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep != "github.com/zqagent/sidecar/protocol" {
			t.Errorf("protocol depends on %s", dep)
		}
	}
}
