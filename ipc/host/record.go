package host

import "github.com/zqagent/sidecar/protocol"

// interactiveIDs returns the requestId and the tool call id of an
// interactive event's data.
func interactiveIDs(d protocol.EventData) (requestID, callID string) {
	switch v := d.(type) {
	case protocol.PermissionRequiredData:
		return v.RequestID, v.ReqID
	case protocol.AskUserQuestionData:
		return v.RequestID, v.ReqID
	case protocol.PlanProposedData:
		return v.RequestID, v.ReqID
	case protocol.DirectoryRequestedData:
		return v.RequestID, v.ReqID
	case *protocol.PermissionRequiredData:
		return v.RequestID, v.ReqID
	case *protocol.AskUserQuestionData:
		return v.RequestID, v.ReqID
	case *protocol.PlanProposedData:
		return v.RequestID, v.ReqID
	case *protocol.DirectoryRequestedData:
		return v.RequestID, v.ReqID
	}
	return "", ""
}
