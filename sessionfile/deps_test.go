package sessionfile_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestSessionFileIsAFormat: the format reads and writes bytes and knows the
// wire's vocabulary (event types) and the history's shape (llm); it keeps
// no rows and runs nothing, so it imports neither the store nor the host.
func TestSessionFileIsAFormat(t *testing.T) {
	const m = deptest.Module
	deptest.DepChecker{
		BadDeps: map[string]string{m + "/...": "a format of bytes: the wire's and the history's types only"},
		Allow: map[string]string{
			m + "/protocol": "the event types a file may hold",
			m + "/llm":      "the history's message type",
		},
	}.Check(t)
}
