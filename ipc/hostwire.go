package ipc

import "github.com/zqagent/sidecar/ipc/host"

// The wire types of the session host, under the names clients of this
// package use.
type (
	// ApprovalResponse answers a permission_required request.
	ApprovalResponse = host.ApprovalResponse
	// QuestionResponse answers an ask_user_question request.
	QuestionResponse = host.QuestionResponse
	// PlanResponse answers a plan_proposed request.
	PlanResponse = host.PlanResponse
	// DirectoryResponse answers a directory_requested request.
	DirectoryResponse = host.DirectoryResponse
	// SessionDropped is the params of a session.dropped notification.
	SessionDropped = host.SessionDropped
)
