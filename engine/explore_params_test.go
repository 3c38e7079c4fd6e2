package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zqagent/sidecar/tools"
)

// TestExploreParams pins the schema the model is told for explore, now
// reflected from exploreArgs: the one property, required, closed.
func TestExploreParams(t *testing.T) {
	require.JSONEq(t, `{"type":"object","properties":{"task":{"type":"string","description":"What to find out, with enough context for someone who has not seen this conversation."}},"required":["task"],"additionalProperties":false}`,
		string(tools.ParamsOf[exploreArgs]()))
}
