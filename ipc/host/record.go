package host

import (
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/store"
)

// eventInput turns an engine event into what the store appends, with the
// store's Recorder rules (pending request of an interactive event, session
// status at turn_start/turn_end, history checkpoint at iteration_end and
// turn_end), plus one of ours: an interactive event also checkpoints the
// history, so that a turn that dies waiting (SIGKILL) is resumable from the
// assistant message whose tool calls wait.
func eventInput(rec *store.Recorder, ev engine.Event, history func() []llm.Message) (store.EventInput, error) {
	in, err := rec.Input(ev, history)
	if err != nil {
		return store.EventInput{}, err
	}
	if ev.Type.Interactive() && history != nil && in.History == nil {
		in.History = history()
		if in.History == nil {
			in.History = []llm.Message{}
		}
	}
	return in, nil
}

// interactiveIDs returns the requestId and the tool call id of an
// interactive event's data.
func interactiveIDs(d engine.EventData) (requestID, callID string) {
	switch v := d.(type) {
	case engine.PermissionRequiredData:
		return v.RequestID, v.ReqID
	case engine.AskUserQuestionData:
		return v.RequestID, v.ReqID
	case engine.PlanProposedData:
		return v.RequestID, v.ReqID
	case engine.DirectoryRequestedData:
		return v.RequestID, v.ReqID
	case *engine.PermissionRequiredData:
		return v.RequestID, v.ReqID
	case *engine.AskUserQuestionData:
		return v.RequestID, v.ReqID
	case *engine.PlanProposedData:
		return v.RequestID, v.ReqID
	case *engine.DirectoryRequestedData:
		return v.RequestID, v.ReqID
	}
	return "", ""
}
