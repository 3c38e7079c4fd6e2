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
	require.Same(t, &first.enc[0][0], &second.enc[0][0], "an unchanged message is reused")
	require.Equal(t, first.token, second.prev)
	require.Equal(t, 1, second.same)

	huge := []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("y", maxCachedHistoryBytes)}}
	_, err = c.encode("huge", huge)
	require.NoError(t, err)
	require.NotContains(t, c.sessions, "huge", "a history over the budget is not kept")
	c.forget("again")
	require.NotContains(t, c.sessions, "again")
}

// An encoding names the one it extends: the unchanged prefix, counted up to
// the first changed message; a history whose entry was lost, or that is
// encoded while another encoding of it is in flight, names none.
func TestHistoryCacheTokens(t *testing.T) {
	var c historyCache
	m := func(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }
	a, err := c.encode("s", []llm.Message{m("a"), m("b")})
	require.NoError(t, err)
	require.NotZero(t, a.token)
	require.Zero(t, a.prev, "a first encoding extends none")
	require.Zero(t, a.same)

	b, err := c.encode("s", []llm.Message{m("a"), m("b"), m("c")})
	require.NoError(t, err)
	require.Equal(t, a.token, b.prev)
	require.Equal(t, 2, b.same)
	require.NotEqual(t, a.token, b.token)

	// A rewrite in the middle: the prefix stops at the first change, even
	// if later messages are reused.
	d, err := c.encode("s", []llm.Message{m("a"), m("X"), m("c")})
	require.NoError(t, err)
	require.Equal(t, b.token, d.prev)
	require.Equal(t, 1, d.same)

	c.forget("s")
	e, err := c.encode("s", []llm.Message{m("a"), m("X"), m("c")})
	require.NoError(t, err)
	require.Zero(t, e.prev, "the entry was dropped: nothing is known of the earlier encodings")
	require.Zero(t, e.same)
}
