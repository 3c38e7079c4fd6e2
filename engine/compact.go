package engine

import (
	"context"
	"encoding/json"

	"github.com/zqagent/sidecar/llm"
)

// CompactRequest is what a Compactor sees before a model request.
type CompactRequest struct {
	TaskID    string
	Model     string
	Messages  []llm.Message // the history about to be sent (system prompt first)
	LastUsage *llm.Usage    // usage of the previous response of this session, if any
	// Force is set after the API reported a context overflow: the compactor
	// must shrink the history now.
	Force bool
	// Iteration is the 1-based iteration of the turn.
	Iteration int
	// OnResponse, when set, gets the answer to a model request the
	// compactor made (a summary) on the turn's goroutine: the engine
	// counts its usage and reports its rate limits.
	OnResponse func(model, reqID string, resp llm.ChatResponse)
}

// Compactor manages the context window (seed chapter 14). The engine calls
// Compact before every model request, mid-turn too. It returns the history
// to use (the same slice when nothing changed) and emits compacting and
// compacted through emit; emit reports false when the consumer is gone.
type Compactor interface {
	Compact(ctx context.Context, req CompactRequest, emit func(Event) bool) ([]llm.Message, error)
	// State is the observable compaction state, persisted with the session.
	State() json.RawMessage
	// Restore loads a state saved from State.
	Restore(state json.RawMessage) error
}

// CompactionState returns the compactor's state (nil without a compactor).
func (e *Engine) CompactionState() json.RawMessage {
	if e.compactor == nil {
		return nil
	}
	return e.compactor.State()
}

// Compactor returns the engine's compactor (nil when none).
func (e *Engine) Compactor() Compactor { return e.compactor }
