package ipc_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestServerIsBelowTheFrontDoors: ipc is the server the desktop apps talk
// to; the ACP front door is a client of it, so no ipc package imports acp.
// The Go client (ipc/client, used by zqchat, zqbench and the tests) speaks
// the wire only: it links no server, engine or store.
func TestServerIsBelowTheFrontDoors(t *testing.T) {
	const m = deptest.Module
	deptest.DepChecker{
		Pkgs:    []string{"./..."},
		BadDeps: map[string]string{m + "/acp": "acp is a front door above the server"},
	}.Check(t)
	deptest.DepChecker{
		Pkgs:    []string{"./client"},
		BadDeps: map[string]string{m + "/...": "the client speaks the wire only"},
		Allow:   map[string]string{m + "/protocol": "the wire's vocabulary"},
	}.Check(t)
}
