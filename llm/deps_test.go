package llm_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestLLMIsVocabulary: llm is the model vocabulary (messages, tool schemas,
// the Provider interface) shared by the engine, the tools, the store and
// MCP, so it and its providers sit below all of them: they depend on no
// sidecar package but their own and the proxy dialer.
func TestLLMIsVocabulary(t *testing.T) {
	deptest.DepChecker{
		Pkgs:    []string{"./..."},
		BadDeps: map[string]string{deptest.Module + "/...": "llm sits below every layer that uses it"},
		Allow: map[string]string{
			deptest.Module + "/llm/...":  "its own packages",
			deptest.Module + "/netproxy": "the providers dial through the configured proxy",
		},
	}.Check(t)
}
