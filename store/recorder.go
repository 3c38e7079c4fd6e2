package store

import (
	"encoding/json"
	"fmt"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
)

// The statuses the Recorder and RecoverInterrupted set.
const (
	statusRunning     = "running"
	statusInterrupted = "interrupted"
)

// Recorder plugs the store into the engine: the host feeds it every event
// of a session's turns, in order, and it stores them with group commit.
// The engine itself stays free of SQL. A Recorder is cheap; it holds no
// state besides its session id, so several may exist for one session as
// long as the host feeds events in order.
type Recorder struct {
	s         *Store
	sessionID string
}

// Recorder returns the recorder of a session.
func (s *Store) Recorder(sessionID string) *Recorder {
	return &Recorder{s: s, sessionID: sessionID}
}

// SessionID returns the recorded session.
func (r *Recorder) SessionID() string { return r.sessionID }

// kindOf maps an interactive event type to its pending request kind.
func kindOf(t engine.EventType) string {
	switch t {
	case engine.EventPermissionRequired:
		return KindApproval
	case engine.EventAskUserQuestion:
		return KindQuestion
	case engine.EventPlanProposed:
		return KindPlan
	case engine.EventDirectoryRequested:
		return KindDirectory
	}
	return ""
}

// Input turns an engine event into what the store appends:
//   - the turn id is ev.TaskID();
//   - an interactive event opens a pending request (id data.requestId, tool
//     call data.reqId, kind from the type, payload the event data);
//   - iteration_end and turn_end checkpoint history() (when history is not
//     nil) in the event's transaction;
//   - turn_start sets the session running; turn_end sets it idle, or
//     interrupted when the turn was interrupted, in which case its pending
//     requests stay answerable (Resume continues the turn); any other
//     turn_end closes the turn's unanswered requests.
//
// history is called here, on the caller's goroutine, so the snapshot is
// the engine's history at the moment of the event.
func (r *Recorder) Input(ev engine.Event, history func() []llm.Message) (EventInput, error) {
	data, err := ev.MarshalData()
	if err != nil {
		return EventInput{}, fmt.Errorf("record %s: %w: %v", ev.Type, ErrInvalid, err)
	}
	in := EventInput{TurnID: ev.TaskID(), Type: string(ev.Type), Data: data}
	switch {
	case ev.Type.Interactive():
		var ids struct {
			RequestID string `json:"requestId"`
			ReqID     string `json:"reqId"`
		}
		if err := json.Unmarshal(data, &ids); err != nil || ids.RequestID == "" {
			return EventInput{}, fmt.Errorf("record %s: %w: no requestId", ev.Type, ErrInvalid)
		}
		in.Pending = &PendingInput{RequestID: ids.RequestID, Kind: kindOf(ev.Type), ToolCallID: ids.ReqID}
	case ev.Type == engine.EventTurnStart:
		in.Status, in.CountTask = statusRunning, true
	case ev.Type == engine.EventSessionNamed:
		var d engine.SessionNamedData
		if json.Unmarshal(data, &d) == nil && d.Name != "" {
			in.Title = &Title{Name: d.Name, Source: d.Source}
		}
	case ev.Type == engine.EventTurnEnd:
		var end struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(data, &end)
		if end.Status == engine.StatusInterrupted {
			in.Status = statusInterrupted
		} else {
			in.Status = StatusIdle
			in.ClosePending = true
		}
	}
	if (ev.Type == engine.EventIterationEnd || ev.Type == engine.EventTurnEnd) && history != nil {
		in.History = history()
		if in.History == nil {
			in.History = []llm.Message{}
		}
	}
	return in, nil
}

// Record stores ev with group commit; done (may be nil) gets the stored
// event after the commit, on the writer goroutine, in record order (see
// Enqueue). Record blocks only while the store's queue is full.
func (r *Recorder) Record(ev engine.Event, history func() []llm.Message, done func(Event, error)) {
	in, err := r.Input(ev, history)
	if err != nil {
		if done != nil {
			done(Event{}, err)
		}
		return
	}
	r.s.Enqueue(r.sessionID, in, done)
}
