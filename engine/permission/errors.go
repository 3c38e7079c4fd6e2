package permission

import "errors"

// Sentinels of the permission package.
var (
	// ErrUnknownMode: a mode name that is not discuss, plan, interactive or auto.
	ErrUnknownMode = errors.New("unknown permission mode")
	// ErrUnknownPolicy: a shellPolicy that is not approve, sandbox, workspace or all.
	ErrUnknownPolicy = errors.New("unknown shell policy")
	// ErrUnknownOutcome: an approval outcome that is not once, always_tool,
	// always_command or deny.
	ErrUnknownOutcome = errors.New("unknown approval outcome")
	// ErrUnknownDefaultApproval: a defaultApproval that is not error, deny or allow.
	ErrUnknownDefaultApproval = errors.New("unknown default approval")
	// ErrNoApprover: a call needed the user's approval but no approver was set
	// (defaultApproval "error", the seed's default).
	ErrNoApprover = errors.New("tool call needs approval but no approver is set (call SetApprover, or set defaultApproval to deny or allow)")
)
