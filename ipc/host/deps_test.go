package host_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestHostKnowsNoTransport keeps the session host below the server: it
// reaches subscribers through its Sink interface and engines through
// Engines, so it imports neither the WebSocket library nor the transport,
// the server (ipc) or its handlers.
func TestHostKnowsNoTransport(t *testing.T) {
	const m = deptest.Module
	const why = "the host reaches subscribers through its Sink"
	deptest.DepChecker{BadDeps: map[string]string{
		"github.com/coder/websocket/...": why,
		m + "/ipc/wsrpc":                 why,
		m + "/acp":                       why,
		m + "/ipc":                       why,
	}}.Check(t)
}
