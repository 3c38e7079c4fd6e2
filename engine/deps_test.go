package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineStaysEmbeddable keeps the engine a plain library: it must not
// import the sidecar's server or store (SPEC §2), nor the concrete model
// provider, the proxy dialer or the builtin tools: the default wiring of
// those is package backend's (backend.NewEngine). The engine keeps the tool
// registry (tools), the interactive tools' handler interfaces
// (tools/interact) and what the permission engine needs (confine, sandbox,
// and tools/shell's grammar of the shell that runs commands).
func TestEngineStaysEmbeddable(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zqagent/sidecar/engine").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{
		"github.com/zqagent/sidecar/ipc", "github.com/zqagent/sidecar/store", "github.com/zqagent/sidecar/backend",
		"github.com/coder/websocket", "modernc.org/sqlite",
		"github.com/zqagent/sidecar/llm/openai", "github.com/zqagent/sidecar/netproxy",
		"github.com/zqagent/sidecar/tools/fs", "github.com/zqagent/sidecar/tools/search",
		"github.com/zqagent/sidecar/tools/web", "github.com/zqagent/sidecar/tools/git",
		"github.com/zqagent/sidecar/tools/diff", "github.com/zqagent/sidecar/tools/media",
		"github.com/zqagent/sidecar/tools/todo", "github.com/zqagent/sidecar/tools/terminaltools",
		"github.com/zqagent/sidecar/tools/conflict",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("engine depends on %s", dep)
			}
		}
	}
}
