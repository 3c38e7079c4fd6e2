package backend_test

import (
	"iter"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// The engine tests' helpers (engine/engine_test.go), for the tests of the
// default wiring.

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func collect(seq iter.Seq[engine.Event]) []engine.Event {
	var out []engine.Event
	for ev := range seq {
		out = append(out, ev)
	}
	return out
}

func last(evs []engine.Event) protocol.TurnEndData {
	return evs[len(evs)-1].Data.(protocol.TurnEndData)
}

func find[T protocol.EventData](evs []engine.Event) []T {
	var out []T
	for _, e := range evs {
		if d, ok := e.Data.(T); ok {
			out = append(out, d)
		}
	}
	return out
}
