package ipc

import "github.com/zqagent/sidecar/backend"

// The wire types of the session host, under the names clients of this
// package use.
type (
	// ApprovalResponse answers a permission_required request.
	ApprovalResponse = backend.ApprovalResponse
	// QuestionResponse answers an ask_user_question request.
	QuestionResponse = backend.QuestionResponse
	// PlanResponse answers a plan_proposed request.
	PlanResponse = backend.PlanResponse
	// DirectoryResponse answers a directory_requested request.
	DirectoryResponse = backend.DirectoryResponse
	// SessionDropped is the params of a session.dropped notification.
	SessionDropped = backend.SessionDropped
)
