package backend

import (
	"github.com/zqagent/sidecar/engine"
)

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
