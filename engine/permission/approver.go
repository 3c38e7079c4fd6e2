package permission

import (
	"context"
	"fmt"

	"github.com/zqagent/sidecar/tools"
)

// Request is what the approver is asked (the seed's PermissionRequest).
type Request struct {
	// ToolName is the key of the decision and of an always_tool grant: the
	// real tool's tools.Spec.GrantName (for a call through mcp_call_tool,
	// the MCP tool it names, never the generic tool).
	ToolName   string
	Arguments  map[string]any
	Metadata   *tools.Metadata
	Reason     string // the permission engine's reason, for the approval card
	ToolCallID string // the model's tool call id (the events' reqId)
	RequestID  string // the approval's own id
	// Command is the executable an always_command grant covers, "" if none
	// (see CommandExecutable).
	Command string
}

// Approver asks the user. It blocks until the user answers or ctx ends.
type Approver func(ctx context.Context, req Request) (Outcome, error)

// Fallback returns the approver used when none was set (seed §6.1
// defaultApproval): error returns an error wrapping ErrNoApprover, deny
// denies, allow allows once. An unknown value behaves as error.
func Fallback(d DefaultApproval) Approver {
	switch d {
	case DefaultDeny:
		return func(context.Context, Request) (Outcome, error) { return OutcomeDeny, nil }
	case DefaultAllow:
		return func(context.Context, Request) (Outcome, error) { return OutcomeOnce, nil }
	}
	return func(_ context.Context, req Request) (Outcome, error) {
		return OutcomeDeny, fmt.Errorf("%s: %w", req.ToolName, ErrNoApprover)
	}
}

// Record applies the session grant an outcome carries: always_tool allows
// the tool for the rest of the session; always_command allows the request's
// executable (req.Command, or the executable of its "command" argument) for
// simple commands. once and deny record nothing. An always_command for a
// command that is not a simple one grants nothing.
func (e *Engine) Record(req Request, o Outcome) {
	switch o {
	case OutcomeAlwaysTool:
		e.AllowToolForSession(req.ToolName)
	case OutcomeAlwaysCommand:
		exe := req.Command
		if exe == "" {
			if cmd, ok := req.Arguments["command"].(string); ok {
				exe, _ = CommandExecutable(cmd)
			}
		}
		if exe != "" {
			e.AllowCommandForSession(exe)
		}
	}
}
