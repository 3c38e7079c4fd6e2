package protocol

import (
	"encoding/json"
	"time"
)

// Mode is a session's permission mode.
type Mode string

// The permission modes.
const (
	// ModeDiscuss: no tool that changes anything runs.
	ModeDiscuss Mode = "discuss"
	// ModePlan: the agent plans first; changes wait for the plan's approval.
	ModePlan Mode = "plan"
	// ModeInteractive (default): changes and commands ask for approval.
	ModeInteractive Mode = "interactive"
	// ModeAuto: file changes in the workspace run without asking; shell
	// commands follow the shell policy.
	ModeAuto Mode = "auto"
)

// Modes lists the modes.
var Modes = []Mode{ModeDiscuss, ModePlan, ModeInteractive, ModeAuto}

// ShellPolicy decides which shell commands run without approval.
type ShellPolicy string

// The shell policies.
const (
	// ShellApprove (default): every command not allowed asks.
	ShellApprove ShellPolicy = "approve"
	// ShellSandbox: commands run without asking while the OS sandbox is
	// enforced (session.sandbox.enforced), else they ask.
	ShellSandbox ShellPolicy = "sandbox"
	// ShellWorkspace: commands that look confined to the workspace run
	// without asking (a heuristic, not a boundary).
	ShellWorkspace ShellPolicy = "workspace"
	// ShellAll: every command runs without asking.
	ShellAll ShellPolicy = "all"
)

// ShellPolicies lists the policies.
var ShellPolicies = []ShellPolicy{ShellApprove, ShellSandbox, ShellWorkspace, ShellAll}

// SandboxMode is the OS sandbox shell commands run in: auto, off or required.
type SandboxMode string

// The sandbox modes.
const (
	SandboxAuto     SandboxMode = "auto"
	SandboxOff      SandboxMode = "off"
	SandboxRequired SandboxMode = "required"
)

// SandboxModes lists the modes.
var SandboxModes = []SandboxMode{SandboxAuto, SandboxOff, SandboxRequired}

// SessionStatus is a session's status: the session host's turn state
// (backend.TurnState; ui-protocol.md, "The turn state machine").
type SessionStatus string

// The session statuses.
const (
	StatusIdle SessionStatus = "idle"
	// StatusInterrupted: at rest; the last turn was interrupted (by the
	// user or a restart) and turn.resume may continue it.
	StatusInterrupted SessionStatus = "interrupted"
	// StatusQueued: turns wait to run (between turns, or after a restart).
	StatusQueued  SessionStatus = "queued"
	StatusRunning SessionStatus = "running"
	// StatusAwaiting: the running turn waits for request.respond.
	StatusAwaiting SessionStatus = "awaiting"
	// StatusSuspended: a restart found the session's turn waiting for
	// answers; its requests are still answerable (see turn_suspended).
	StatusSuspended SessionStatus = "suspended"
)

// SessionStatuses lists the statuses.
var SessionStatuses = []SessionStatus{StatusIdle, StatusInterrupted, StatusQueued, StatusRunning, StatusAwaiting, StatusSuspended}

// Session is the session object.
type Session struct {
	SessionID string `json:"sessionId"`
	ProjectID string `json:"projectId"`
	Title     string `json:"title"`
	// TitleSource is auto (named by the model) or user (session.rename).
	TitleSource string `json:"titleSource"`
	Model       string `json:"model"`
	// Mode is a Mode.
	Mode  string `json:"mode" enum:"Mode"`
	Agent string `json:"agent"`
	// Provider is the provider profile (providers.list).
	Provider string `json:"provider"`
	// VCS is the change tracking the session uses (its own or its
	// project's), a VCSMode.
	VCS string `json:"vcs" enum:"VCSMode"`
	// Lang is the language the session runs in.
	Lang string `json:"lang"`
	// Status is a SessionStatus.
	Status string `json:"status" enum:"SessionStatus"`
	// Running is whether the session is busy: queued, running or awaiting.
	Running   bool      `json:"running"`
	TaskCount int       `json:"taskCount"`
	LastSeq   int64     `json:"lastSeq"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Settings are the stored per-session options.
	Settings SessionSettings `json:"settings"`
	// Sandbox is the OS sandbox as it really is on this machine.
	Sandbox SandboxInfo `json:"sandbox"`
	// Usage is the session's usage totals over every model request it
	// made (its last usage event's session totals); absent before any.
	Usage *SessionUsage `json:"usage,omitempty"`
	// ForkedFrom is where session.fork made this session from; absent for
	// other sessions.
	ForkedFrom *ForkedFrom `json:"forkedFrom,omitempty"`
	// Archived is whether the session is archived (session.archive):
	// session.list leaves it out unless asked for archived sessions.
	Archived bool `json:"archived"`
	// Snippet is where a session.list query matched; only in the result
	// of session.list with a query.
	Snippet *SessionSnippet `json:"snippet,omitempty"`
}

// SessionSettings are the stored per-session options; absent ones have
// their defaults.
type SessionSettings struct {
	AllowedCommands   []string `json:"allowedCommands,omitempty"`
	ShellPolicy       string   `json:"shellPolicy,omitempty" enum:"ShellPolicy"`
	ApprovalTimeoutMS int64    `json:"approvalTimeoutMs,omitempty"`
	ReasoningEffort   string   `json:"reasoningEffort,omitempty"`
	Sandbox           string   `json:"sandbox,omitempty" enum:"SandboxMode"`
	SandboxNetwork    bool     `json:"sandboxNetwork,omitempty"`
	// Lang is the stored language; absent for sessions made before
	// languages were stored (they follow the default).
	Lang string `json:"lang,omitempty"`
}

// SandboxInfo is the session's OS sandbox as it really is, not as asked.
type SandboxInfo struct {
	// Mode is as configured (a SandboxMode).
	Mode string `json:"mode" enum:"SandboxMode"`
	// Backend is bwrap, sandbox-exec or none.
	Backend string `json:"backend"`
	// Enforced reports whether shell commands really run confined.
	Enforced bool `json:"enforced"`
	// Network reports whether shell commands can reach the network (always
	// true when not enforced).
	Network bool `json:"network"`
	// Reason says why the sandbox is not enforced.
	Reason string `json:"reason,omitempty"`
}

// RequestKind is the kind of a pending request.
type RequestKind string

// The request kinds, with the event that opens each.
const (
	RequestApproval  RequestKind = "approval"  // permission_required
	RequestQuestion  RequestKind = "question"  // ask_user_question
	RequestPlan      RequestKind = "plan"      // plan_proposed
	RequestDirectory RequestKind = "directory" // directory_requested
)

// RequestKinds lists the kinds.
var RequestKinds = []RequestKind{RequestApproval, RequestQuestion, RequestPlan, RequestDirectory, RequestElicitation}

// PendingRequest is an unanswered approval, question, plan or directory
// request.
type PendingRequest struct {
	RequestID string `json:"requestId"`
	// Kind is one of the RequestKind values (a string, like
	// SessionEvent.Type).
	Kind       string `json:"kind" enum:"RequestKind"`
	TurnID     string `json:"turnId"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Seq is the seq of the event that opened it.
	Seq int64 `json:"seq"`
	// Data is that event's data (PermissionRequiredData,
	// AskUserQuestionData, PlanProposedData, DirectoryRequestedData or
	// ElicitationRequestedData by Kind), so a card renders the same from
	// either.
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"createdAt"`
}

// Message is one message of a session's history (session.get).
type Message struct {
	// Role is user, assistant or tool.
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is an assistant message's reasoning text.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
	// AttachmentRefs name the stored attachments of the message.
	AttachmentRefs []AttachmentRef `json:"attachmentRefs,omitempty"`
	// Notice marks a message the engine inserted itself (steering,
	// compaction summary, elision stub).
	Notice string `json:"notice,omitempty"`
	// TurnID is on a user message that opened a turn: the turn
	// session.rewind takes to go back to just before it.
	TurnID string `json:"turnId,omitempty"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the call's arguments as a JSON text.
	Arguments string `json:"arguments"`
}

// AttachmentRef is an attachment saved in the session folder; Path is
// relative to it.
type AttachmentRef struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Path     string `json:"path"`
}

// SessionIDParams are the params of methods that name a session only.
type SessionIDParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
}

// SessionCreateParams are the params of session.create.
type SessionCreateParams struct {
	ProjectID       string      `json:"projectId" rpc:"required"`
	Mode            Mode        `json:"mode,omitempty"`
	Model           string      `json:"model,omitempty"`
	Agent           string      `json:"agent,omitempty"`
	Title           string      `json:"title,omitempty"`
	AllowedCommands []string    `json:"allowedCommands,omitempty"`
	ShellPolicy     ShellPolicy `json:"shellPolicy,omitempty"`
	// ApprovalTimeoutMS, when > 0, answers deny to an approval nobody
	// answers within it.
	ApprovalTimeoutMS int64 `json:"approvalTimeoutMs,omitempty"`
	// ReasoningEffort is low, medium or high.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Provider is the provider profile; "" = openai.
	Provider string `json:"provider,omitempty"`
	// VCS is the session's own change tracking; "" = the project's.
	VCS            VCSMode     `json:"vcs,omitempty"`
	Sandbox        SandboxMode `json:"sandbox,omitempty"`
	SandboxNetwork bool        `json:"sandboxNetwork,omitempty"`
	// Lang is a tag of zh, en, zh-TW, ja, ko or es; "" = the default.
	Lang string `json:"lang,omitempty"`
}

// SessionCreateResult is the result of session.create.
type SessionCreateResult struct {
	SessionID string  `json:"sessionId"`
	Session   Session `json:"session"`
}

// SessionGetResult is the result of session.get.
type SessionGetResult struct {
	Session Session `json:"session"`
	// Messages is the history without the system prompt.
	Messages        []Message        `json:"messages"`
	PendingRequests []PendingRequest `json:"pendingRequests"`
	// QueuedTurns is the number of turns queued behind the running one.
	QueuedTurns int `json:"queuedTurns"`
}

// DeletedResult is the result of session.delete and providers.delete.
type DeletedResult struct {
	Deleted bool `json:"deleted"`
}

// SessionRenameParams are the params of session.rename.
type SessionRenameParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Title     string `json:"title" rpc:"required"`
}

// SessionSubscribeParams are the params of session.subscribe.
type SessionSubscribeParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// AfterSeq: stored events with seq > afterSeq are replayed first; 0
	// (or absent) = all.
	AfterSeq int64 `json:"afterSeq,omitempty"`
}

// SessionSubscribeResult is the result of session.subscribe.
type SessionSubscribeResult struct {
	// LastSeq is the last committed seq when the subscription started.
	LastSeq         int64            `json:"lastSeq"`
	Running         bool             `json:"running"`
	PendingRequests []PendingRequest `json:"pendingRequests"`
	// Clients are the connections subscribed to the session, this one
	// included (see session.presence).
	Clients []PresenceClient `json:"clients"`
}

// PresenceClient is a connection subscribed to a session: the client it
// named in initialize.
type PresenceClient struct {
	// ConnectionID is an opaque id of the connection, stable while it is
	// open.
	ConnectionID string `json:"connectionId"`
	Name         string `json:"name"`
	Version      string `json:"version"`
}

// UnsubscribeResult is the result of session.unsubscribe and
// terminal.unsubscribe.
type UnsubscribeResult struct {
	// Unsubscribed is false when there was no subscription.
	Unsubscribed bool `json:"unsubscribed"`
}

// SessionSetModeParams are the params of session.setMode.
type SessionSetModeParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Mode      Mode   `json:"mode" rpc:"required"`
}

// SessionSetModelParams are the params of session.setModel.
type SessionSetModelParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Model     string `json:"model" rpc:"required"`
}

// SessionSetAgentParams are the params of session.setAgent.
type SessionSetAgentParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// Agent is the agent's name; "" = the default agent (code).
	Agent string `json:"agent,omitempty"`
}

// SessionSetPermissionsParams are the params of session.setPermissions;
// absent members are unchanged.
type SessionSetPermissionsParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// AllowedCommands replaces the list ([] clears it).
	AllowedCommands *[]string    `json:"allowedCommands,omitempty"`
	ShellPolicy     *ShellPolicy `json:"shellPolicy,omitempty"`
	// ApprovalTimeoutMS: 0 removes the timeout.
	ApprovalTimeoutMS *int64       `json:"approvalTimeoutMs,omitempty"`
	Sandbox           *SandboxMode `json:"sandbox,omitempty"`
	SandboxNetwork    *bool        `json:"sandboxNetwork,omitempty"`
}

// SessionSetLangParams are the params of session.setLang.
type SessionSetLangParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Lang      string `json:"lang" rpc:"required"`
}

// GrantKind is what a grant covers: a tool or a command.
type GrantKind string

// The grant kinds.
const (
	GrantTool    GrantKind = "tool"
	GrantCommand GrantKind = "command"
)

// GrantKinds lists the kinds.
var GrantKinds = []GrantKind{GrantTool, GrantCommand}

// Grant is an always_tool or always_command answer kept for the session.
type Grant struct {
	// Kind is a GrantKind.
	Kind string `json:"kind" enum:"GrantKind"`
	// Name is the tool, or the executable.
	Name string `json:"name"`
	// GrantedAt is null for a grant saved by a sidecar that did not record
	// times.
	GrantedAt *time.Time `json:"grantedAt"`
}

// SessionGrantsResult is the result of session.grants.
type SessionGrantsResult struct {
	// Grants are tools first, each kind sorted by name.
	Grants []Grant `json:"grants"`
}

// SessionRevokeGrantParams are the params of session.revokeGrant.
type SessionRevokeGrantParams struct {
	SessionID string    `json:"sessionId" rpc:"required"`
	Kind      GrantKind `json:"kind" rpc:"required"`
	Name      string    `json:"name" rpc:"required"`
}

// RevokedResult is the result of session.revokeGrant.
type RevokedResult struct {
	Revoked bool `json:"revoked"`
}
