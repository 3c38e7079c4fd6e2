package backend

import (
	"fmt"
	"slices"
)

// TurnState is where a session's turns stand: the one turn state machine.
// The session host owns it (sessionHost.state, changed only by transition),
// the store keeps it as sessions.status, and session.get, session.list and
// subscribe's running read it; the engine only reports facts (a turn
// started, waits, ended) that move it.
//
//	idle / interrupted ──turn.start, retry, resume──► queued ◄──────────────┐
//	     ▲                                            │ turn_start          │ turn_end
//	     │ turn_end (interrupted: after an            ▼                     │ (more queued)
//	     │ interrupt or a restart)                 running ─────────────────┘
//	     ├────────────────────────────────────────  │  ▲
//	     │                 permission_required, …   ▼  │ last answer
//	     ├──────────────────────────────────────  awaiting
//	     │ turn.interrupt, turn.start                │ the process stopped
//	     │ (the turn's one turn_end)                 ▼ (turn_suspended at restart)
//	     └──────────────────────────────────────  suspended ──answer, turn.resume──► queued
//	queued ──turn.interrupt (drops the queue)──► idle
//
// The same drawing is in ui-protocol.md. Queued turns are durable (the
// store's turn queue): after a restart they run, in order.
// A turn that dies with the process while running (nothing pending) gets
// its one turn_end at restart: running → interrupted.
type TurnState string

// The states. idle and interrupted are at rest (interrupted: the last turn
// was interrupted and may be continued with turn.resume); queued, running
// and awaiting are busy (the session's "running" on the wire); suspended
// is a turn that died waiting for answers, still answerable.
const (
	StateIdle        TurnState = "idle"
	StateInterrupted TurnState = "interrupted"
	StateQueued      TurnState = "queued"
	StateRunning     TurnState = "running"
	StateAwaiting    TurnState = "awaiting"
	StateSuspended   TurnState = "suspended"
)

// transitions lists, for each state, the states it may move to (staying
// in a state is always allowed).
var transitions = map[TurnState][]TurnState{
	StateIdle:        {StateQueued},
	StateInterrupted: {StateQueued, StateIdle},
	// A queued turn runs, or is dropped, or ends without starting (its
	// engine could not load: error + turn_end).
	StateQueued:  {StateRunning, StateIdle, StateInterrupted},
	StateRunning: {StateAwaiting, StateIdle, StateInterrupted, StateQueued, StateSuspended},
	StateAwaiting: {StateRunning, StateIdle, StateInterrupted, StateQueued,
		StateSuspended},
	StateSuspended: {StateQueued, StateIdle, StateInterrupted},
}

// ParseTurnState reads a stored status. Unknown words are an error; the
// empty status of a new row is idle.
func ParseTurnState(s string) (TurnState, error) {
	if s == "" {
		return StateIdle, nil
	}
	st := TurnState(s)
	if _, ok := transitions[st]; !ok {
		return StateIdle, fmt.Errorf("unknown turn state %q", s)
	}
	return st, nil
}

// String returns the state's name (its stored and wire form).
func (s TurnState) String() string { return string(s) }

// Busy reports whether a turn is queued, running or waiting: the wire's
// "running".
func (s TurnState) Busy() bool {
	return s == StateQueued || s == StateRunning || s == StateAwaiting
}

// Next checks the move from s to to.
func (s TurnState) Next(to TurnState) error {
	if s == to || slices.Contains(transitions[s], to) {
		return nil
	}
	return fmt.Errorf("%w: %s → %s", ErrIllegalTransition, s, to)
}
