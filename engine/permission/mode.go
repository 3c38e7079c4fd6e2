package permission

import (
	"fmt"
	"strings"
)

// Mode is the execution mode of seed §8.2.
type Mode string

// Modes.
const (
	ModeDiscuss     Mode = "discuss"     // read-only: no writes, no execution
	ModePlan        Mode = "plan"        // read-only: no writes, no execution
	ModeInteractive Mode = "interactive" // side effects are approved one by one (default)
	ModeAuto        Mode = "auto"        // side effects are all allowed
)

// ParseMode parses a mode name (case-insensitive); "" is interactive.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeInteractive, nil
	case ModeDiscuss, ModePlan, ModeInteractive, ModeAuto:
		return m, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownMode, s)
}

func (m Mode) String() string { return string(m) }

// ReadOnly reports whether the mode forbids side effects.
func (m Mode) ReadOnly() bool { return m == ModeDiscuss || m == ModePlan }

// ShellPolicy says when run_shell needs no approval (seed §8.4).
type ShellPolicy string

// Shell policies.
const (
	PolicyApprove   ShellPolicy = "approve"   // everything outside the allowlist is approved (default)
	PolicySandbox   ShellPolicy = "sandbox"   // no approval only when the OS sandbox is enforced
	PolicyWorkspace ShellPolicy = "workspace" // sandbox enforced, or else a workspace-path heuristic
	PolicyAll       ShellPolicy = "all"       // the shell never asks (auto, for the shell only)
)

// ParseShellPolicy parses a policy name (case-insensitive); "" is approve.
func ParseShellPolicy(s string) (ShellPolicy, error) {
	switch p := ShellPolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case "":
		return PolicyApprove, nil
	case PolicyApprove, PolicySandbox, PolicyWorkspace, PolicyAll:
		return p, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownPolicy, s)
}

func (p ShellPolicy) String() string { return string(p) }

// DefaultApproval is what happens when a call needs the user and no approver
// was set (seed §6.1 defaultApproval).
type DefaultApproval string

// Default approvals.
const (
	DefaultError DefaultApproval = "error" // the call fails with ErrNoApprover (default)
	DefaultDeny  DefaultApproval = "deny"  // the call is denied
	DefaultAllow DefaultApproval = "allow" // the call is allowed once
)

// ParseDefaultApproval parses a defaultApproval name; "" is error.
func ParseDefaultApproval(s string) (DefaultApproval, error) {
	switch d := DefaultApproval(strings.ToLower(strings.TrimSpace(s))); d {
	case "":
		return DefaultError, nil
	case DefaultError, DefaultDeny, DefaultAllow:
		return d, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownDefaultApproval, s)
}

func (d DefaultApproval) String() string { return string(d) }

// Outcome is the user's answer to an approval request (seed §8.3).
type Outcome string

// Outcomes.
const (
	OutcomeOnce          Outcome = "once"           // this call only
	OutcomeAlwaysTool    Outcome = "always_tool"    // this tool, for the rest of the session
	OutcomeAlwaysCommand Outcome = "always_command" // this executable, for the rest of the session (run_shell only)
	OutcomeDeny          Outcome = "deny"           // refuse the call
)

// ParseOutcome parses an outcome name.
func ParseOutcome(s string) (Outcome, error) {
	switch o := Outcome(strings.ToLower(strings.TrimSpace(s))); o {
	case OutcomeOnce, OutcomeAlwaysTool, OutcomeAlwaysCommand, OutcomeDeny:
		return o, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownOutcome, s)
}

func (o Outcome) String() string { return string(o) }

// Allows reports whether the outcome lets the call run.
func (o Outcome) Allows() bool { return o != OutcomeDeny && o != "" }
