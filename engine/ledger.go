package engine

import (
	"context"
	"slices"
	"sync"
)

// Ledger is the durable record of the tool calls that began to run, and the
// one place of the rule that a call runs at most once, even across a crash
// (kill -9): the engine starts a call's handler only after Begin returned
// nil for it, and a resumed turn never starts a call that Started lists
// (it gets MayHaveRunResult instead). Begin failing fails closed: the call
// does not run and the turn ends with an error (error_type "storage").
//
// A host with a store gives each engine its session's ledger
// (Options.Ledger; store.Ledger is one); an engine without one keeps the
// record in memory, which holds for the life of the process only.
type Ledger interface {
	// Begin returns once the start of call callID of turn turnID is
	// durable (the tool_started event the engine emitted just before is
	// committed). An error means it is not, and the call must not run.
	Begin(ctx context.Context, turnID, callID string) error
	// Started returns the calls of turn turnID that began and have no
	// result: they may have run, partly or fully.
	Started(ctx context.Context, turnID string) ([]string, error)
}

// memLedger is the Ledger of an engine without one: calls that began and
// have no result, by turn, for this process's life.
type memLedger struct {
	e *Engine

	mu      sync.Mutex
	started map[string][]string // turn id → call ids, in start order
}

// Begin records the call's start.
func (l *memLedger) Begin(_ context.Context, turnID, callID string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started == nil {
		l.started = map[string][]string{}
	}
	if !slices.Contains(l.started[turnID], callID) {
		l.started[turnID] = append(l.started[turnID], callID)
	}
	return nil
}

// Started lists the calls of turnID that began and have no result in the
// engine's history.
func (l *memLedger) Started(_ context.Context, turnID string) ([]string, error) {
	l.mu.Lock()
	ids := slices.Clone(l.started[turnID])
	l.mu.Unlock()
	answered := l.e.answeredCallIDs()
	return slices.DeleteFunc(ids, func(id string) bool { return answered[id] }), nil
}

// answeredCallIDs returns the ids of the calls that have a result in the
// history.
func (e *Engine) answeredCallIDs() map[string]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]bool{}
	for _, m := range e.messages {
		if m.ToolCallID != "" {
			out[m.ToolCallID] = true
		}
	}
	return out
}
