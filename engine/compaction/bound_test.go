package compaction

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// The byte bound is never below the real count, for any family, so a
// history it puts under the soft threshold is under it.
func TestByteBoundIsAnUpperBound(t *testing.T) {
	texts := []string{
		"hello world",
		strings.Repeat("func parse(x int) error { return nil }\n", 300),
		strings.Repeat("解析器の出力を確認します。", 200),
		strings.Repeat("🙂👍🏽", 500),
		strings.Repeat(" ", 5000),
		strings.Repeat("a", 3000),
	}
	for _, model := range []string{"gpt-4o", "deepseek-chat", "totally-unknown"} {
		est := NewEstimator(model)
		for _, text := range texts {
			msgs := []llm.Message{
				{Role: llm.RoleUser, Content: text},
				{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Arguments: `{"path":"` + text[:10] + `"}`}}},
			}
			bound, _ := byteBound(msgs)
			require.GreaterOrEqual(t, int(float64(bound)*factorOf(model)+0.5), est.Messages(msgs), "%s: %.20q", model, text)
		}
	}
}

// A history whose bound reaches the limit is counted exactly; one below
// it is not, and the decision is the same.
func TestBoundedCountOnlyBelowTheLimit(t *testing.T) {
	m := newManager(100_000, nil)
	msgs := session(1, 2, 100)
	bound, _ := byteBound(msgs)
	_, _, ok := m.boundedCount(Request{Model: "gpt-4o", Messages: msgs}, bound+2)
	require.True(t, ok)
	_, _, ok = m.boundedCount(Request{Model: "gpt-4o", Messages: msgs}, bound)
	require.False(t, ok, "a bound at the limit needs the exact count")
	exact, _ := m.Count(Request{Model: "gpt-4o", Messages: msgs})
	require.Less(t, exact, bound+2)
}
