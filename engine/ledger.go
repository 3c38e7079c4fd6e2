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
	// Started returns the calls of turn turnID that began to run, whatever
	// became of them. A resumed turn gives those the history holds no
	// result for MayHaveRunResult and never runs them again.
	Started(ctx context.Context, turnID string) ([]string, error)
}

// memLedger is the Ledger of an engine without one: the calls that began,
// by turn, for this process's life.
type memLedger struct {
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

// Started lists the calls of turnID that began.
func (l *memLedger) Started(_ context.Context, turnID string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.started[turnID]), nil
}
