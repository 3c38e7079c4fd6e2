package engine

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// Hook receives the engine's lifecycle callbacks (seed §11.1). Callbacks are
// synchronous side channels for a second consumer (persistence, billing,
// logs): they run on the engine's goroutine, must not block, and a panic in
// one is recovered and logged, never stopping the turn. Drive a UI from Run's
// events, not from hooks: hooks have no back-pressure.
//
// Embed BaseHook to implement only the callbacks you need.
type Hook interface {
	OnTurnStart(input string)
	OnTurnEnd(status string, iterations int, producedFiles []string)
	OnAssistantDelta(text string)
	OnReasoningDelta(text string)
	OnAssistantMessage(text string, toolCalls []string, usage *llm.Usage)
	OnToolProposed(name string, args map[string]any)
	OnToolStarted(name string)
	OnToolFinished(name, status, resultPreview string)
	OnPermissionRequired(name, reason string)
	OnIterationEnd(iteration int)
	OnCompacting(info protocol.CompactingData)
	OnCompacted(text string, info protocol.CompactedData)
	OnError(err, errorType string, info protocol.EventErrorData)
	OnRetry(attempt, max int, reason string)
	OnInterrupted(iterations int)
	// OnEvent receives the events no callback above matches.
	OnEvent(typ protocol.EventType, data protocol.EventData)
}

// Observer is an optional interface of a Hook that also wants every event
// whole (the sidecar forwards a subagent's events this way).
type Observer interface {
	Observe(ev Event)
}

// BaseHook implements Hook with no-ops.
type BaseHook struct{}

func (BaseHook) OnTurnStart(string)                              {}
func (BaseHook) OnTurnEnd(string, int, []string)                 {}
func (BaseHook) OnAssistantDelta(string)                         {}
func (BaseHook) OnReasoningDelta(string)                         {}
func (BaseHook) OnAssistantMessage(string, []string, *llm.Usage) {}
func (BaseHook) OnToolProposed(string, map[string]any)           {}
func (BaseHook) OnToolStarted(string)                            {}
func (BaseHook) OnToolFinished(string, string, string)           {}
func (BaseHook) OnPermissionRequired(string, string)             {}
func (BaseHook) OnIterationEnd(int)                              {}
func (BaseHook) OnCompacting(protocol.CompactingData)            {}
func (BaseHook) OnCompacted(string, protocol.CompactedData)      {}
func (BaseHook) OnError(string, string, protocol.EventErrorData) {}
func (BaseHook) OnRetry(int, int, string)                        {}
func (BaseHook) OnInterrupted(int)                               {}
func (BaseHook) OnEvent(protocol.EventType, protocol.EventData)  {}

var _ Hook = BaseHook{}

// CompositeHook calls several hooks in order; a panic in one does not keep
// the others from running.
type CompositeHook []Hook

var (
	_ Hook     = CompositeHook(nil)
	_ Observer = CompositeHook(nil)
)

func (c CompositeHook) each(f func(Hook)) {
	for _, h := range c {
		if h != nil {
			safeCall(func() { f(h) })
		}
	}
}

func (c CompositeHook) OnTurnStart(in string) { c.each(func(h Hook) { h.OnTurnStart(in) }) }
func (c CompositeHook) OnTurnEnd(s string, n int, f []string) {
	c.each(func(h Hook) { h.OnTurnEnd(s, n, f) })
}
func (c CompositeHook) OnAssistantDelta(t string) { c.each(func(h Hook) { h.OnAssistantDelta(t) }) }
func (c CompositeHook) OnReasoningDelta(t string) { c.each(func(h Hook) { h.OnReasoningDelta(t) }) }
func (c CompositeHook) OnAssistantMessage(t string, tc []string, u *llm.Usage) {
	c.each(func(h Hook) { h.OnAssistantMessage(t, tc, u) })
}
func (c CompositeHook) OnToolProposed(n string, a map[string]any) {
	c.each(func(h Hook) { h.OnToolProposed(n, a) })
}
func (c CompositeHook) OnToolStarted(n string) { c.each(func(h Hook) { h.OnToolStarted(n) }) }
func (c CompositeHook) OnToolFinished(n, s, p string) {
	c.each(func(h Hook) { h.OnToolFinished(n, s, p) })
}
func (c CompositeHook) OnPermissionRequired(n, r string) {
	c.each(func(h Hook) { h.OnPermissionRequired(n, r) })
}
func (c CompositeHook) OnIterationEnd(i int) { c.each(func(h Hook) { h.OnIterationEnd(i) }) }
func (c CompositeHook) OnCompacting(info protocol.CompactingData) {
	c.each(func(h Hook) { h.OnCompacting(info) })
}
func (c CompositeHook) OnCompacted(t string, i protocol.CompactedData) {
	c.each(func(h Hook) { h.OnCompacted(t, i) })
}
func (c CompositeHook) OnError(e, t string, i protocol.EventErrorData) {
	c.each(func(h Hook) { h.OnError(e, t, i) })
}
func (c CompositeHook) OnRetry(a, m int, r string) { c.each(func(h Hook) { h.OnRetry(a, m, r) }) }
func (c CompositeHook) OnInterrupted(n int)        { c.each(func(h Hook) { h.OnInterrupted(n) }) }
func (c CompositeHook) OnEvent(t protocol.EventType, d protocol.EventData) {
	c.each(func(h Hook) { h.OnEvent(t, d) })
}

// Observe forwards the event to the members that are Observers.
func (c CompositeHook) Observe(ev Event) {
	c.each(func(h Hook) {
		if o, ok := h.(Observer); ok {
			o.Observe(ev)
		}
	})
}

// safeCall runs f, recovering and logging a panic.
func safeCall(f func()) {
	defer func() {
		if r := recover(); r != nil {
			slog.Error("engine hook panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	f()
}

// dispatch delivers ev to h's matching callback (and Observe), recovering
// panics.
func dispatch(h Hook, ev Event) {
	if h == nil {
		return
	}
	if o, ok := h.(Observer); ok {
		if _, composite := h.(CompositeHook); !composite {
			safeCall(func() { o.Observe(ev) })
		} else {
			o.Observe(ev)
		}
	}
	safeCall(func() {
		switch d := ev.Data.(type) {
		case protocol.TurnStartData:
			h.OnTurnStart(d.Input)
		case protocol.TurnEndData:
			h.OnTurnEnd(string(d.Status), d.Iterations, d.ProducedFiles)
		case protocol.DeltaData:
			if ev.Type == protocol.EventReasoningDelta {
				h.OnReasoningDelta(d.Text)
			} else {
				h.OnAssistantDelta(d.Text)
			}
		case protocol.AssistantMessageData:
			h.OnAssistantMessage(d.Text, d.ToolCalls, (*llm.Usage)(d.Usage))
		case protocol.ToolProposedData:
			h.OnToolProposed(d.Name, d.Arguments)
		case protocol.ToolStartedData:
			h.OnToolStarted(d.Name)
		case protocol.ToolFinishedData:
			h.OnToolFinished(d.Name, string(d.Status), d.ResultPreview)
		case protocol.PermissionRequiredData:
			h.OnPermissionRequired(d.Name, d.Reason)
		case protocol.IterationEndData:
			h.OnIterationEnd(d.Iteration)
		case protocol.CompactingData:
			h.OnCompacting(d)
		case protocol.CompactedData:
			h.OnCompacted(d.SummaryPreview, d)
		case protocol.EventErrorData:
			h.OnError(d.Error, d.ErrorType, d)
		case protocol.LLMRetryData:
			h.OnRetry(d.Attempt, d.Max, d.Reason)
		case protocol.InterruptedData:
			h.OnInterrupted(d.Iterations)
		default:
			h.OnEvent(ev.Type, ev.Data)
		}
	})
}
