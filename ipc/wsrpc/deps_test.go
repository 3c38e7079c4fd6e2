package wsrpc_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestTransportKnowsNoSessions keeps the transport a transport: it depends
// on no engine, store, session host or server package of the sidecar (only
// on protocol, the wire's vocabulary).
func TestTransportKnowsNoSessions(t *testing.T) {
	deptest.DepChecker{
		BadDeps: map[string]string{deptest.Module + "/...": "the transport knows no sessions"},
		Allow:   map[string]string{deptest.Module + "/protocol": "the wire's vocabulary"},
	}.Check(t)
}
