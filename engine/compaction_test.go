package engine_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/compaction"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// bigResult is ~1,500 tokens of text BPE cannot compress much.
func bigResult(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < 6000; i++ {
		fmt.Fprintf(&b, "line%d value%d ", n, (i*7919+n*104729)%100000)
	}
	return b.String()
}

func compactingRig(t *testing.T, window int, responses ...scripted.Response) *rig {
	var r *rig
	r = newRig(t, permission.ModeInteractive, func(o *engine.Options) {
		o.Compactor = engine.NewCompactor(compaction.Config{Provider: providerOf(&r), ContextWindow: window}, "en")
	}, responses...)
	n := 0
	r.reg.MustRegister(tools.Spec{Name: "read_big", Schema: schema("read_big"), Meta: tools.Metadata{RiskLevel: tools.RiskLow, Class: tools.ClassRead}, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		n++
		return bigResult(n), nil
	}})
	return r
}

// providerOf defers to the rig's provider, which exists only after newRig.
type lateProvider struct{ r **rig }

func (p lateProvider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return (*p.r).provider.Stream(ctx, req)
}
func (p lateProvider) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	return (*p.r).provider.Chat(ctx, req)
}
func providerOf(r **rig) llm.Provider { return lateProvider{r} }

func TestLongSessionCompactsWithoutSpiral(t *testing.T) {
	const calls = 300
	script := make([]scripted.Response, 0, calls+1)
	for i := range calls {
		script = append(script, scripted.Response{ToolCalls: []llm.ToolCall{call(fmt.Sprintf("c%d", i), "read_big", fmt.Sprintf(`{"x":"%d"}`, i%7))}})
	}
	script = append(script, scripted.Response{Text: "all done"})
	r := compactingRig(t, 20_000, script...)
	for range calls {
		r.provider.AppendChat("Summary: the agent read many big files; nothing else happened.")
	}
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "read everything"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)

	compacted := find[protocol.CompactedData](evs)
	require.NotEmpty(t, compacted)
	require.Equal(t, "elided", compacted[0].Method, "the soft stage comes first, without a model call")
	summaries := 0
	perIteration := map[int]int{}
	iteration := 0
	var lastCompaction *protocol.CompactedData
	for _, e := range evs {
		switch d := e.Data.(type) {
		case protocol.LLMRequestData:
			if d.Compact {
				continue // the summary request of the compaction under way
			}
			iteration++
			if lastCompaction != nil {
				require.Less(t, lastCompaction.TokensAfter, 16_000, "a compaction ends under the hard threshold")
				lastCompaction = nil
			}
		case protocol.CompactedData:
			if d.Method == "summarized" {
				summaries++
				perIteration[iteration]++
			}
			lastCompaction = &d
		}
	}
	require.Positive(t, summaries, "a long session reaches the hard threshold")
	for it, n := range perIteration {
		require.Equal(t, 1, n, "iteration %d summarised more than once", it)
	}
	require.Len(t, r.provider.ChatRequests(), summaries)
	compactRequests := 0
	for _, d := range find[protocol.LLMRequestData](evs) {
		if d.Compact {
			compactRequests++
		}
	}
	require.Equal(t, summaries, compactRequests, "each summary request is announced")
	// Required messages survive: the system prompt and the first request.
	h := r.eng.Messages()
	require.Equal(t, llm.RoleSystem, h[0].Role)
	require.Equal(t, "read everything", h[1].Content)
	// Every request the model saw fit the window.
	est := compaction.NewEstimator("test-model")
	for i, req := range r.provider.Requests() {
		require.Less(t, est.Messages(req.Messages), 20_000, "request %d overflowed", i)
	}
	require.NotEmpty(t, r.eng.CompactionState())
}

func TestContextOverflowIsCompactedAndRetried(t *testing.T) {
	r := compactingRig(t, 1_000_000,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "read_big", `{}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c2", "read_big", `{}`)}},
		scripted.Response{Err: "This model's maximum context length is 8192 tokens", ErrKind: "context_overflow"},
		scripted.Response{Text: "fits now"})
	r.provider.AppendChat("summary of the reads")
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status, "the overflow is invisible to the caller")
	require.Empty(t, find[protocol.EventErrorData](evs))
	starts := find[protocol.CompactingData](evs)
	require.NotEmpty(t, starts)
	require.Equal(t, "overflow", starts[len(starts)-1].Trigger)
}

func TestOverflowTwiceIsRetriableError(t *testing.T) {
	r := compactingRig(t, 1_000_000,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "read_big", `{}`)}},
		scripted.Response{Err: "context_length_exceeded", ErrKind: "context_overflow"},
		scripted.Response{Err: "context_length_exceeded", ErrKind: "context_overflow"})
	r.provider.AppendChat("summary")
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnError, last(evs).Status)
	e := find[protocol.EventErrorData](evs)
	require.Len(t, e, 1)
	require.True(t, e[0].Retriable)
}
