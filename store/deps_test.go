package store_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestStoreKnowsNoEngine: the store offers neutral primitives; what an
// engine event does to durable state is the session host's one rule, so
// the store imports neither the engine nor the host.
func TestStoreKnowsNoEngine(t *testing.T) {
	const m = deptest.Module
	deptest.DepChecker{
		Pkgs: []string{"./..."},
		BadDeps: map[string]string{
			m + "/engine/...": "what an event does to durable state is the host's rule",
			m + "/backend":    "the backend records events and builds engines",
			m + "/ipc/...":    "the host and the server are above the store",
			m + "/acp":        "a front door",
			m + "/tools/...":  "the store keeps rows, it runs no tool",
		},
		Allow: map[string]string{m + "/tools": "the tools' contracts (confine's errors are tools' sentinels)"},
	}.Check(t)
}
