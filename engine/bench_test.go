package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
)

// BenchmarkToolRound measures the engine's own overhead per tool round: a
// 20-round turn where each model response calls one cheap tool, against the
// scripted provider. Reported per round (ns/round, allocs/round).
func BenchmarkToolRound(b *testing.B) {
	const rounds = 20
	script := make([]scripted.Response, 0, rounds+1)
	for range rounds {
		script = append(script, scripted.Response{Text: "ok", ToolCalls: []llm.ToolCall{call("", "echo", `{"x":"a"}`)}})
	}
	script = append(script, scripted.Response{Text: "done"})
	r := newRig(b, permission.ModeInteractive, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		r.provider.Append(script...)
		_ = r.eng.SetMessages(nil)
		b.StartTimer()
		for range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds), "ns/round")
}

// BenchmarkEventThroughput measures events per second through Run: one long
// streamed answer delivered one rune per delta.
func BenchmarkEventThroughput(b *testing.B) {
	text := strings.Repeat("x", 100_000)
	r := newRig(b, permission.ModeInteractive, nil)
	b.ReportAllocs()
	events := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		r.provider.Append(scripted.Response{Text: text, ChunkSize: 1})
		_ = r.eng.SetMessages(nil)
		b.StartTimer()
		for range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
			events++
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
