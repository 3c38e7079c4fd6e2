package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// This file is the one place that decides what an event does to durable
// state; the store only offers the primitives (EventInput's fields).

// stateAfter is the turn state an event moves a session to (ok false: the
// event does not move it). queued says whether more turns wait in the
// session's queue when a turn ends.
func stateAfter(ev engine.Event, queued bool) (TurnState, bool) {
	switch {
	case ev.Type == protocol.EventTurnStart:
		return StateRunning, true
	case ev.Type.Interactive():
		return StateAwaiting, true
	case ev.Type == protocol.EventTurnSuspended:
		return StateSuspended, true
	case ev.Type == protocol.EventTurnEnd:
		if queued {
			return StateQueued, true
		}
		if factsOf(ev).Status == protocol.TurnInterrupted {
			return StateInterrupted, true
		}
		return StateIdle, true
	}
	return "", false
}

// durableInput turns an engine event into what the store appends with it,
// in its transaction:
//   - the turn id is ev.TaskID();
//   - status is the turn state the event moves the session to (state; ""
//     leaves it);
//   - turn_start counts a task and takes its turn out of the durable queue
//     (as does turn_end: a queued turn that ends without starting);
//   - an interactive event opens a durable request (id data.requestId, tool
//     call data.reqId) and checkpoints the history, so a turn that dies
//     waiting resumes from the assistant message whose calls wait;
//   - tool_finished, iteration_end and turn_end checkpoint the history
//     (when history is not nil): a call whose tool_finished is stored
//     keeps its result after a crash (the call ledger never runs a
//     started call again, so without it the model would only learn that
//     it may have run);
//   - a turn_end other than interrupted closes the turn's unanswered
//     requests (an interrupted turn's stay answerable until the host closes
//     them; turn.resume continues it), each with a request_resolved
//     {outcome: turn_ended} recorded before the turn_end;
//   - turn_end marks where the turn's history ends (what session.fork
//     copies of it);
//   - session_named names the session (never over the user's title);
//   - usage sets the session's usage totals to the event's (its session
//     tokens and cost), unless a later usage event (more requests) is
//     stored already;
//   - session_rewound and rewind_interrupted end the session's rewind
//     intent (session_rewound's history, the rewound one, is set by the
//     rewind: rewind.go).
//
// history is called here, on the caller's goroutine, so the snapshot is
// the engine's history at the moment of the event.
func durableInput(ev engine.Event, history func() []llm.Message, state TurnState) (store.EventInput, error) {
	data, err := ev.MarshalData()
	if err != nil {
		return store.EventInput{}, fmt.Errorf("record %s: %w", ev.Type, err)
	}
	in := store.EventInput{TurnID: ev.TaskID(), Type: string(ev.Type), Data: data, Status: string(state)}
	checkpoint := false
	switch {
	case ev.Type.Interactive():
		f := readFacts(data)
		if f.RequestID == "" {
			return store.EventInput{}, fmt.Errorf("record %s: %w: no requestId", ev.Type, store.ErrInvalid)
		}
		in.Pending = &store.PendingInput{RequestID: f.RequestID, Kind: requestKind(ev.Type), ToolCallID: f.ReqID}
		checkpoint = true
	case ev.Type == protocol.EventTurnStart:
		in.CountTask, in.Dequeue = true, true
	case ev.Type == protocol.EventIterationEnd, ev.Type == protocol.EventToolFinished:
		checkpoint = true
	case ev.Type == protocol.EventTurnEnd:
		in.Dequeue, checkpoint, in.MarkTurn = true, true, true
		in.ClosePending = readFacts(data).Status != protocol.TurnInterrupted
		in.Resolved = closedResolved
	case ev.Type == protocol.EventSessionNamed:
		if f := readFacts(data); f.Name != "" {
			in.Title = &store.Title{Name: f.Name, Source: f.Source}
		}
	case ev.Type == protocol.EventUsage:
		in.Usage, in.UsageSeq = sessionUsageOf(data)
	case ev.Type == protocol.EventSessionRewound, ev.Type == protocol.EventRewindInterrupted:
		in.EndRewind = true
	}
	if checkpoint && history != nil {
		in.History = history()
		if in.History == nil {
			in.History = []llm.Message{}
		}
	}
	return in, nil
}

// requestKind is the durable request kind of an interactive event.
func requestKind(t protocol.EventType) string {
	switch t {
	case protocol.EventPermissionRequired:
		return store.KindApproval
	case protocol.EventAskUserQuestion:
		return store.KindQuestion
	case protocol.EventPlanProposed:
		return store.KindPlan
	case protocol.EventDirectoryRequested:
		return store.KindDirectory
	case protocol.EventElicitationRequested:
		return store.KindElicitation
	}
	return ""
}

// eventFacts is what the host reads of an event's data: the request ids of
// an interactive event, a turn_end's status, a session_named's name. It is
// read from the data as recorded and sent (its JSON), the one shape every
// event has, whatever type carries it in memory.
type eventFacts struct {
	RequestID string              `json:"requestId"`
	ReqID     string              `json:"reqId"` // the tool call id
	Status    protocol.TurnStatus `json:"status"`
	Name      string              `json:"name"`
	Source    string              `json:"source"`
}

// readFacts reads the facts of an event's encoded data (zero values when
// it has none).
func readFacts(data []byte) eventFacts {
	var f eventFacts
	_ = json.Unmarshal(data, &f) // data the engine encoded; a bad one has no facts
	return f
}

// factsOf reads the facts of an event not yet encoded.
func factsOf(ev engine.Event) eventFacts {
	data, err := ev.MarshalData()
	if err != nil {
		return eventFacts{}
	}
	return readFacts(data)
}

// RestartReason is the reason of the turn_suspended or turn_end recorded
// for turns found dead at start.
const RestartReason = "sidecar_restart"

// RecoverInterrupted finds the sessions a dead process left busy and
// settles them, before any turn runs (New calls it, once per open store):
//   - a turn that waited for answers is suspended: one turn_suspended
//     {reason: sidecar_restart, pendingRequests}; its requests stay
//     answerable and the answer resumes it under the same turn id;
//   - a turn that ran with nothing pending gets its one turn_end
//     {status: interrupted, reason: sidecar_restart};
//   - queued turns stay queued (the server runs them when it starts).
//
// The turn_end's message is in the session's language (lang; nil: none).
// It returns the ids of the sessions whose turn it settled.
func RecoverInterrupted(ctx context.Context, st *store.Store, lang func(sessionID string) string) ([]string, error) {
	// A session stored queued whose queue is empty (its turns were dropped
	// or ended unstarted) is at rest.
	queuedIDs, err := st.SessionsWithStatus(ctx, string(StateQueued))
	if err != nil {
		return nil, fmt.Errorf("recover interrupted sessions: %w", err)
	}
	for _, id := range queuedIDs {
		q, err := st.QueuedTurns(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
		if len(q) == 0 {
			if err := st.SetStatus(ctx, id, string(StateIdle)); err != nil {
				return nil, fmt.Errorf("recover session %s: %w", id, err)
			}
		}
	}
	ids, err := st.SessionsWithStatus(ctx, string(StateRunning), string(StateAwaiting))
	if err != nil {
		return nil, fmt.Errorf("recover interrupted sessions: %w", err)
	}
	now := time.Now()
	for _, id := range ids {
		start, _, err := st.LastEventOfType(ctx, id, string(protocol.EventTurnStart))
		if err != nil {
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
		if err := closeElicitationsAtStart(ctx, st, id, now); err != nil { // elicitation.go
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
		pend, err := st.PendingRequests(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
		queued, err := st.QueuedTurns(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
		var ev engine.Event
		if len(pend) > 0 {
			d := protocol.TurnSuspendedData{Reason: RestartReason, PendingRequests: make([]string, len(pend))}
			for i, p := range pend {
				d.PendingRequests[i] = p.RequestID
			}
			d.TaskID = start.TurnID
			ev = engine.Event{Type: protocol.EventTurnSuspended, Data: d}
		} else {
			d := protocol.TurnEndData{Status: protocol.TurnInterrupted, ProducedFiles: []string{}, Reason: RestartReason}
			if lang != nil {
				d.Message = engine.ReasonMessage(lang(id), RestartReason)
			}
			d.TaskID = start.TurnID
			ev = engine.Event{Type: protocol.EventTurnEnd, Data: d}
		}
		state, _ := stateAfter(ev, len(queued) > 0 && len(pend) == 0)
		in, err := durableInput(ev, nil, state)
		if err != nil {
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
		in.TurnID, in.Time = start.TurnID, now
		if _, err := st.Append(ctx, id, in); err != nil {
			return nil, fmt.Errorf("recover session %s: %w", id, err)
		}
	}
	return ids, nil
}
