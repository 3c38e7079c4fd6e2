package protocol_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestProtocolIsALeaf: protocol is the wire's vocabulary that every layer
// (engine, store, ipc, acp, the clients) reads, so it depends on none of
// them, nor on any module: the standard library only. Its generator and
// validator (sub-packages) may use libraries but no other sidecar package.
func TestProtocolIsALeaf(t *testing.T) {
	deptest.DepChecker{StdOnly: "protocol is the leaf every layer reads"}.Check(t)
	deptest.DepChecker{
		Pkgs:    []string{"./..."},
		BadDeps: map[string]string{deptest.Module + "/...": "protocol's tools read the wire types only"},
		Allow:   map[string]string{deptest.Module + "/protocol/...": "its own packages"},
	}.Check(t)
}
