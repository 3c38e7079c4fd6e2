package prices

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

func TestDefaultTable(t *testing.T) {
	tab := Default()
	_, err := time.Parse(time.DateOnly, tab.AsOf())
	require.NoError(t, err, "the table says when its prices were taken")
	p, ok := tab.Lookup("GPT-4o")
	require.True(t, ok)
	require.Equal(t, 2.5, p.Input)
	for _, unknown := range []string{"gpt-4o-2024-05-13", "gpt-5-pro", "gpt-4", "my-local-llama", ""} {
		_, ok := tab.Lookup(unknown)
		require.False(t, ok, "%q has no price: an unlisted snapshot or variant is not its family's", unknown)
	}
}

func TestCost(t *testing.T) {
	p, _ := Default().Lookup("gpt-4.1") // 2.00 input, 0.50 cached, 8.00 output
	u := llm.Usage{PromptTokens: 1_000_000, CachedTokens: 400_000, CompletionTokens: 100_000, ReasoningTokens: 30_000}
	// 600k fresh × 2 + 400k cached × 0.5 + 100k output (reasoning included) × 8
	require.InDelta(t, 1.2+0.2+0.8, p.Cost(u), 1e-12)
	noCache := Price{Input: 1, Output: 2}
	require.InDelta(t, 1.0, noCache.Cost(llm.Usage{PromptTokens: 1_000_000, CachedTokens: 500_000}), 1e-12, "no cached price: no discount")
	require.InDelta(t, 1.0, noCache.Cost(llm.Usage{PromptTokens: 1_000_000, CachedTokens: 2_000_000}), 1e-12, "cached beyond input is capped")
}

func TestWith(t *testing.T) {
	half := 0.5
	tab, err := Default().With(map[string]Price{"My-Model": {Input: 1, CachedInput: &half, Output: 3}, "gpt-4o": {Input: 0, Output: 0}})
	require.NoError(t, err)
	p, ok := tab.Lookup("my-model")
	require.True(t, ok)
	require.Equal(t, 3.0, p.Output)
	p, _ = tab.Lookup("gpt-4o")
	require.Zero(t, p.Input, "an override replaces the default (a free self-hosted endpoint)")
	p, _ = Default().Lookup("gpt-4o")
	require.Equal(t, 2.5, p.Input, "the default table is unchanged")
	for _, bad := range []Price{{Input: -1}, {Output: math.NaN()}, {Input: math.Inf(1)}, {Input: 1e6}} {
		_, err := Default().With(map[string]Price{"m": bad})
		require.ErrorIs(t, err, ErrBadPrice)
	}
	_, err = Default().With(map[string]Price{" ": {}})
	require.ErrorIs(t, err, ErrBadPrice)
}
