package compaction

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine/models"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./engine/compaction -update to create %s", path)
	require.Equal(t, string(want), string(got), "golden file %s differs (go test -update to refresh)", path)
}

// session builds a synthetic history: a first request, then turns of
// read_file/run_shell calls with big results.
func session(turns, callsPerTurn, resultChars int) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "system prompt"}, {Role: llm.RoleUser, Content: "first request: refactor the parser"}}
	n := 0
	for t := range turns {
		if t > 0 {
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("turn %d request", t)})
		}
		for c := range callsPerTurn {
			n++
			id := fmt.Sprintf("c%d", n)
			name, args := "run_shell", fmt.Sprintf(`{"command":"make test %d"}`, n)
			if c%2 == 0 {
				name, args = "read_file", fmt.Sprintf(`{"path":"file%d.go"}`, n%5)
			}
			msgs = append(msgs,
				llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("step %d", n), ToolCalls: []llm.ToolCall{{ID: id, Name: name, Arguments: args}}},
				llm.Message{Role: llm.RoleTool, ToolCallID: id, Name: name, Content: fmt.Sprintf("result %d: %s", n, filler(n, resultChars))})
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("turn %d done", t)})
	}
	return msgs
}

// filler returns about chars characters of text that BPE cannot compress
// much (about 4 characters per token).
func filler(seed, chars int) string {
	words := []string{"parser", "token", "error", "value", "index", "buffer", "node", "scope"}
	var b strings.Builder
	for i := 0; b.Len() < chars; i++ {
		fmt.Fprintf(&b, "%s%d ", words[(i+seed)%len(words)], (i*7919+seed*104729)%100000)
	}
	return b.String()
}

type recorder struct {
	starts []Start
	dones  []Done
}

func (r *recorder) obs() Observer {
	return Observer{Start: func(s Start) bool { r.starts = append(r.starts, s); return true }, Done: func(d Done) { r.dones = append(r.dones, d) }}
}

func methods(r *recorder) []string {
	var out []string
	for _, d := range r.dones {
		out = append(out, d.Method)
	}
	return out
}

func newManager(window int, p llm.Provider) *Manager {
	return New(Config{Provider: p, ContextWindow: window, SummaryPrompt: "SUMMARISE"})
}

func TestModelTable(t *testing.T) {
	cases := []struct {
		model  string
		window int
		family string
		exact  bool
	}{
		{"gpt-4o-mini", 128_000, "openai", true},
		{"openai/gpt-4.1", 1_047_576, "openai", true},
		{"gpt-5", 400_000, "openai", true},
		{"o3-mini", 200_000, "openai", true},
		{"deepseek-chat", 128_000, "deepseek", false},
		{"deepseek-reasoner", 128_000, "deepseek", false},
		{"qwen-plus", 131_072, "qwen", false},
		{"Qwen/Qwen2.5-72B-Instruct", 131_072, "qwen", false},
		{"kimi-k2-0905", 262_144, "kimi", false},
		{"moonshot-v1-8k", 8_192, "kimi", false},
		{"glm-4.5", 131_072, "glm", false},
		{"meta-llama/Llama-3.3-70B-Instruct", 131_072, "llama", false},
		{"totally-unknown", models.FallbackContextWindow, "unknown", false},
	}
	for _, tc := range cases {
		caps := models.Lookup(tc.model)
		require.Equal(t, tc.window, caps.ContextWindow, tc.model)
		require.Equal(t, tc.family, caps.Family, tc.model)
		require.Equal(t, tc.exact, caps.Tokenizer != "", tc.model)
	}
	require.True(t, models.Lookup("deepseek-reasoner").Reasoning)
	require.True(t, models.Lookup("gpt-4o").Vision)
	require.Equal(t, 5000, models.ContextWindow("gpt-4o", 5000), "the option wins")
	t.Setenv("CONTEXT_WINDOW", "7000")
	require.Equal(t, 7000, models.ContextWindow("gpt-4o", 0), "then CONTEXT_WINDOW")
}

func TestEstimatorExactAndSampled(t *testing.T) {
	e := NewEstimator("gpt-4o")
	require.True(t, e.Exact())
	require.Equal(t, 2, e.Text("hello world"))
	// A large text is sampled; it stays within 5% of the exact count.
	big := strings.Repeat("func parse(x int) error { return fmt.Errorf(\"bad %d\", x) } // 解析器\n", 4000)
	exact, err := reference().Count(big)
	require.NoError(t, err)
	got := e.Text(big)
	require.InDelta(t, exact, got, float64(exact)*0.05)
	// Over a whole history the sampling errors average out.
	msgs := session(10, 20, 3300)
	var all strings.Builder
	for _, m := range msgs {
		all.WriteString(m.Content)
	}
	exactAll, err := reference().Count(all.String())
	require.NoError(t, err)
	sum := 0
	for _, m := range msgs {
		sum += e.Text(m.Content)
	}
	require.InDelta(t, exactAll, sum, float64(exactAll)*0.05)
	// Other families are calibrated upwards from o200k.
	ds := NewEstimator("deepseek-chat")
	require.False(t, ds.Exact())
	require.Greater(t, ds.Text(big), got)
}

func TestUsageWinsOverEstimate(t *testing.T) {
	m := newManager(100_000, nil)
	msgs := session(1, 2, 100)
	_, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs}, Observer{})
	require.NoError(t, err)
	after := append(msgs, llm.Message{Role: llm.RoleAssistant, Content: "answer"}, llm.Message{Role: llm.RoleUser, Content: "more"})
	n, estimated := m.Count(Request{Model: "gpt-4o", Messages: after, LastUsage: &llm.Usage{PromptTokens: 50_000, CompletionTokens: 10}})
	require.False(t, estimated)
	require.Greater(t, n, 50_010)
	require.Less(t, n, 50_030)
}

func tokensOf(msgs []llm.Message) int { return NewEstimator("gpt-4o").Messages(msgs) }

func TestSoftThresholdElidesAndDedups(t *testing.T) {
	msgs := session(3, 6, 4000)                  // 18 big results
	window := int(float64(tokensOf(msgs)) / 0.7) // soft (60%) < tokens < hard (80%)
	m := newManager(window, nil)
	_, hard, soft := m.Thresholds("gpt-4o")
	require.Equal(t, int(float64(window)*0.8), hard)
	require.Equal(t, int(float64(window)*0.6), soft)

	// Below the soft threshold nothing happens.
	small := session(1, 2, 200)
	r := &recorder{}
	out, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: small, TaskID: "t"}, r.obs())
	require.NoError(t, err)
	require.Equal(t, small, out)
	require.Empty(t, r.dones)

	tokens, _ := m.Count(Request{Model: "gpt-4o", Messages: msgs})
	require.Greater(t, tokens, soft)
	r = &recorder{}
	out, err = m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs, TaskID: "t", Iteration: 1}, r.obs())
	require.NoError(t, err)
	require.Equal(t, []string{"elided"}, methods(r), "no model call at the soft threshold")
	require.Equal(t, "soft", r.starts[0].Trigger)
	require.Len(t, out, len(msgs), "elision keeps every message")
	elided, superseded := 0, 0
	for _, msg := range out {
		if strings.HasPrefix(msg.Content, elidedPrefix) {
			elided++
		}
		if strings.HasPrefix(msg.Content, supersededPrefix) {
			superseded++
		}
	}
	require.Positive(t, elided)
	require.Positive(t, superseded)
	// The newest iteration's result is never elided.
	require.False(t, isStub(out[len(out)-2].Content))
	require.Less(t, r.dones[0].TokensAfter, soft)
	require.Equal(t, 1, m.State().Compactions)

	t.Run("switched off", func(t *testing.T) {
		t.Setenv("COMPACTION_ELIDE", "0")
		t.Setenv("COMPACTION_DEDUP", "0")
		msgs := session(2, 4, 4000)
		m := newManager(int(float64(tokensOf(msgs))/0.7), scripted.New())
		r := &recorder{}
		_, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs, TaskID: "t"}, r.obs())
		require.NoError(t, err)
		require.NotContains(t, methods(r), "elided")
	})
}

func TestHardThresholdSummarisesAndKeepsRequiredMessages(t *testing.T) {
	p := scripted.New()
	p.AppendChat("The user asked to refactor the parser; steps 1-20 ran tests.")
	msgs := session(4, 6, 2000)
	// The current turn: a user message and a steering note.
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "current turn request"})
	msgs = append(msgs, session(1, 3, 2000)[2:]...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: "steer: also docs", Notice: "steering"})
	m := New(Config{Provider: p, ContextWindow: tokensOf(msgs), SummaryPrompt: "SUMMARISE", NoElide: true, NoDedup: true})
	r := &recorder{}
	out, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs, TaskID: "t1", Iteration: 3}, r.obs())
	require.NoError(t, err)
	require.Equal(t, "threshold", r.starts[0].Trigger)
	require.Equal(t, "summarized", methods(r)[0])
	d := r.dones[0]
	require.NotNil(t, d.KeptUserMessages)
	require.Positive(t, *d.DroppedUserMessages)
	require.Equal(t, "system prompt", out[0].Content)
	require.Equal(t, "first request: refactor the parser", out[1].Content)
	require.Equal(t, NoticeSummary, out[2].Notice)
	require.Contains(t, out[2].Content, "refactor the parser; steps 1-20")
	var contents []string
	for _, msg := range out {
		contents = append(contents, msg.Content)
	}
	require.Contains(t, contents, "current turn request")
	require.Contains(t, contents, "steer: also docs")
	require.Len(t, p.ChatRequests(), 1)
	cr := p.ChatRequests()[0]
	require.Equal(t, "SUMMARISE", cr.Messages[0].Content)
	require.Equal(t, DefaultSummaryMaxTokens, cr.MaxTokens)
	require.Equal(t, "low", cr.ReasoningEffort)
	// Tool results stay paired with their calls.
	assertPaired(t, out)
}

func assertPaired(t *testing.T, msgs []llm.Message) {
	t.Helper()
	open := map[string]bool{}
	for i, m := range msgs {
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		if m.Role == llm.RoleTool {
			require.True(t, open[m.ToolCallID], "tool result %d (%s) without its call", i, m.ToolCallID)
		}
	}
}

func TestNoSpiralOneSummaryPerIteration(t *testing.T) {
	p := scripted.New()
	// A useless summary that is itself huge: it cannot bring the context down.
	p.AppendChat(filler(1, 40_000))
	msgs := session(6, 4, 2000)
	m := New(Config{Provider: p, ContextWindow: tokensOf(msgs) * 2 / 3, SummaryPrompt: "S", NoElide: true, NoDedup: true})
	r := &recorder{}
	out, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs, TaskID: "t", Iteration: 1}, r.obs())
	require.NoError(t, err)
	require.Equal(t, []string{"summarized", "trimmed"}, methods(r))
	_, _, soft := m.Thresholds("gpt-4o")
	require.LessOrEqual(t, r.dones[1].TokensAfter, soft)
	assertPaired(t, out)
	// Same iteration again: no second summary, only trimming.
	r2 := &recorder{}
	_, err = m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: append(out, session(1, 4, 3000)[2:]...), TaskID: "t", Iteration: 1, Force: true}, r2.obs())
	require.NoError(t, err)
	require.Equal(t, []string{"trimmed"}, methods(r2))
	require.Len(t, p.ChatRequests(), 1, "at most one model summary per iteration")
}

func TestForcedCompactionRunsBelowThresholds(t *testing.T) {
	p := scripted.New()
	p.AppendChat("summary")
	m := New(Config{Provider: p, ContextWindow: 1_000_000, SummaryPrompt: "S"})
	r := &recorder{}
	_, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: session(3, 4, 500), TaskID: "t", Force: true}, r.obs())
	require.NoError(t, err)
	require.Contains(t, methods(r), "summarized")
	require.Equal(t, "overflow", r.starts[len(r.starts)-1].Trigger)
}

func TestSummaryFailureIsReported(t *testing.T) {
	p := scripted.New() // no chat answers queued: Chat returns a default title, so use an erroring provider
	msgs := session(6, 4, 2000)
	m := New(Config{Provider: failingChat{p}, ContextWindow: tokensOf(msgs), SummaryPrompt: "S", NoElide: true, NoDedup: true})
	_, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs, TaskID: "t"}, Observer{})
	require.ErrorContains(t, err, "summary request")
}

type failingChat struct{ *scripted.Provider }

func (failingChat) Chat(context.Context, llm.ChatRequest) (llm.ChatResponse, error) {
	return llm.ChatResponse{}, &llm.Error{Kind: llm.KindServer, Status: 500, Msg: "down"}
}

func TestGoldenSummaryPromptAndCompactedHistory(t *testing.T) {
	p := scripted.New()
	p.AppendChat("SUMMARY: parser refactor in progress; tests green.")
	msgs := session(3, 2, 300)
	m := New(Config{Provider: p, ContextWindow: tokensOf(msgs), SummaryPrompt: "SUMMARISE THE CONVERSATION", NoElide: true, NoDedup: true})
	out, err := m.Compact(context.Background(), Request{Model: "gpt-4o", Messages: msgs, TaskID: "g", Iteration: 1}, Observer{})
	require.NoError(t, err)
	req := p.ChatRequests()[0]
	var prompt strings.Builder
	for _, msg := range req.Messages {
		fmt.Fprintf(&prompt, "=== %s\n%s\n", msg.Role, msg.Content)
	}
	golden(t, "summary_prompt.golden", []byte(prompt.String()))
	hist, err := json.MarshalIndent(out, "", "  ")
	require.NoError(t, err)
	golden(t, "compacted_history.golden", hist)
}

// BenchmarkEstimate200K counts a fresh ~200K-token history (no cache).
func BenchmarkEstimate200K(b *testing.B) {
	msgs := session(10, 20, 3300)
	e := NewEstimator("gpt-4o")
	b.Logf("history: %d messages, ~%d tokens", len(msgs), e.Messages(msgs))
	b.ResetTimer()
	for b.Loop() {
		e.mu.Lock()
		e.cache = map[string]int{}
		e.mu.Unlock()
		e.Messages(msgs)
	}
}

// BenchmarkEstimate200KCached is the steady state before each request.
func BenchmarkEstimate200KCached(b *testing.B) {
	msgs := session(10, 20, 3300)
	e := NewEstimator("gpt-4o")
	e.Messages(msgs)
	b.ResetTimer()
	for b.Loop() {
		e.Messages(msgs)
	}
}
