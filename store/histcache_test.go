package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// The checkpoint cache stays within its bounds, whatever the sessions, and
// an unchanged message is reused, not encoded again.
func TestHistoryCacheIsBounded(t *testing.T) {
	var c historyCache
	h := []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("x", 1<<20)}} // ~1 MiB encoded
	for i := range 3 * maxCachedHistories {
		_, err := c.encode(fmt.Sprint("s", i), h)
		require.NoError(t, err)
		require.LessOrEqual(t, len(c.sessions), maxCachedHistories)
		require.LessOrEqual(t, c.size, maxCachedHistoryBytes)
		total := 0
		for _, e := range c.sessions {
			total += e.size
		}
		require.Equal(t, total, c.size)
	}
	first, err := c.encode("again", h)
	require.NoError(t, err)
	second, err := c.encode("again", h)
	require.NoError(t, err)
	require.Same(t, &first[0][0], &second[0][0], "an unchanged message is reused")

	huge := []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("y", maxCachedHistoryBytes)}}
	_, err = c.encode("huge", huge)
	require.NoError(t, err)
	require.NotContains(t, c.sessions, "huge", "a history over the budget is not kept")
	c.forget("again")
	require.NotContains(t, c.sessions, "again")
}
