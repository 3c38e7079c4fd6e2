package engine

import (
	"encoding/json"

	"github.com/zqagent/sidecar/llm"
)

// EventType names an event of seed §9.2.
type EventType string

// The event types, with the seed's wire names.
const (
	EventTurnStart          EventType = "turn_start"
	EventAssistantDelta     EventType = "assistant_delta"
	EventReasoningDelta     EventType = "reasoning_delta"
	EventAssistantMessage   EventType = "assistant_message"
	EventToolProposed       EventType = "tool_proposed"
	EventPermissionRequired EventType = "permission_required"
	EventToolStarted        EventType = "tool_started"
	EventToolFinished       EventType = "tool_finished"
	EventIterationEnd       EventType = "iteration_end"
	EventTurnEnd            EventType = "turn_end"
	EventError              EventType = "error"
	EventInterrupted        EventType = "interrupted"
	EventCompacting         EventType = "compacting"
	EventCompacted          EventType = "compacted"
	EventQueueSteering      EventType = "queue_steering"
	EventLLMRequest         EventType = "llm_request"
	EventAskUserQuestion    EventType = "ask_user_question"
	EventPlanProposed       EventType = "plan_proposed"
	EventDirectoryRequested EventType = "directory_requested"
	EventLLMRetry           EventType = "llm_retry"
	EventSessionNamed       EventType = "session_named"
	// EventTurnSuspended is recorded by the host, never by the engine: at
	// start, for a turn that waited for answers when the process died.
	EventTurnSuspended EventType = "turn_suspended"
)

// AllEventTypes lists every event type, in the seed's order.
var AllEventTypes = []EventType{
	EventTurnStart, EventAssistantDelta, EventReasoningDelta, EventAssistantMessage,
	EventToolProposed, EventPermissionRequired, EventToolStarted, EventToolFinished,
	EventIterationEnd, EventTurnEnd, EventError, EventInterrupted, EventCompacting,
	EventCompacted, EventQueueSteering, EventLLMRequest, EventAskUserQuestion,
	EventPlanProposed, EventDirectoryRequested, EventLLMRetry, EventSessionNamed,
	EventTurnSuspended,
}

// Interactive reports whether events of this type wait for an answer through
// a requestId.
func (t EventType) Interactive() bool {
	switch t {
	case EventPermissionRequired, EventAskUserQuestion, EventPlanProposed, EventDirectoryRequested:
		return true
	}
	return false
}

// Event is one item of a turn's event stream. Data is one of the *Data types
// below; it marshals to the seed's field names.
type Event struct {
	Type EventType `json:"type"`
	Data EventData `json:"data"`
}

// EventData is the payload of an Event.
type EventData interface{ eventType() EventType }

// MarshalData returns the JSON of e.Data.
func (e Event) MarshalData() (json.RawMessage, error) { return json.Marshal(e.Data) }

// TaskID returns the turn id an event belongs to ("" when none).
func (e Event) TaskID() string {
	if t, ok := e.Data.(interface{ taskID() string }); ok {
		return t.taskID()
	}
	return ""
}

// Turn statuses of turn_end.
const (
	StatusCompleted     = "completed"
	StatusMaxIterations = "max_iterations_exceeded"
	StatusInterrupted   = "interrupted"
	StatusError         = "error"
)

// Tool statuses of tool_finished.
const (
	ToolOK          = "ok"
	ToolError       = "error"
	ToolDenied      = "denied"
	ToolInterrupted = "interrupted"
)

type task struct {
	TaskID string `json:"taskId"`
}

func (t task) taskID() string { return t.TaskID }

// TurnStartData: a turn begins.
type TurnStartData struct {
	task
	// Resumed: this continues a turn (same taskId) that was suspended or
	// died with its calls unanswered; it is not a new turn.
	Resumed         bool                   `json:"resumed,omitempty"`
	Input           string                 `json:"input"`
	AttachmentCount int                    `json:"attachmentCount,omitempty"`
	Attachments     []llm.StoredAttachment `json:"attachments,omitempty"`
}

// DeltaData: a streamed increment of text or reasoning.
type DeltaData struct {
	task
	Text  string `json:"text"`
	ReqID string `json:"reqId"`
}

// AssistantMessageData: one complete model response.
type AssistantMessageData struct {
	task
	Text      string     `json:"text"`
	Reasoning string     `json:"reasoning"`
	ToolCalls []string   `json:"tool_calls"`
	Usage     *llm.Usage `json:"usage,omitempty"`
	ReqID     string     `json:"reqId"`
	LogTime   string     `json:"logTime"`
}

// ToolProposedData: the model asked for a tool call.
type ToolProposedData struct {
	task
	ReqID     string         `json:"reqId"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// PermissionRequiredData: a call waits for the approver.
type PermissionRequiredData struct {
	task
	ReqID     string         `json:"reqId"`
	RequestID string         `json:"requestId"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Reason    string         `json:"reason"`
	Category  string         `json:"category"`
	RiskLevel string         `json:"riskLevel,omitempty"`
	// Command is the executable name a run_shell "always_command" grant
	// would cover; "" when always_command is not offered (AlwaysCommand
	// false, AlwaysCommandNote says why).
	Command           string `json:"command"`
	AlwaysCommand     bool   `json:"alwaysCommand"`
	AlwaysCommandNote string `json:"alwaysCommandNote,omitempty"`
	// ToolGrant is the name an always_tool answer grants (what
	// session.grants lists): the tool's name, or for an MCP tool
	// "mcp:<server>/<tool>" however it was called. Always set; omitted
	// only from cards older sidecars stored.
	ToolGrant string `json:"toolGrant,omitempty"`
	// Via is the dispatcher the model called ("mcp_call_tool") when Name
	// and Arguments are those of the tool it named; "" for a direct call.
	Via string `json:"via,omitempty"`
	// Diff is what a file tool's call will change (tools.Spec.Preview),
	// computed when the card is made; nil for other tools and when the
	// change cannot be computed.
	Diff *CardDiff `json:"diff,omitempty"`
	// Warnings and Display: text fields holding control characters, ANSI
	// escapes, bidi or invisible characters, and their escaped display forms
	// by field path (see TextWarning). Empty when the text is clean.
	Warnings []TextWarning     `json:"warnings,omitempty"`
	Display  map[string]string `json:"display,omitempty"`
}

// ToolStartedData: a call begins.
type ToolStartedData struct {
	task
	ReqID     string `json:"reqId"`
	Name      string `json:"name"`
	StartTime int64  `json:"startTime,omitempty"` // unix ms
}

// ToolFinishedData: a call ended.
type ToolFinishedData struct {
	task
	ReqID         string `json:"reqId"`
	Name          string `json:"name"`
	Status        string `json:"status"`
	Reason        string `json:"reason,omitempty"`
	Duration      int64  `json:"duration,omitempty"` // ms
	ResultPreview string `json:"result_preview,omitempty"`
	// ParentReqID is set on events of a subagent forwarded to the UI: the
	// explore call that ran it.
	ParentReqID string `json:"parentReqId,omitempty"`
}

// IterationEndData: one model call and its tools are done.
type IterationEndData struct {
	task
	Iteration int `json:"iteration"`
}

// TurnEndData: the turn is over (always exactly one per turn).
type TurnEndData struct {
	task
	Status        string   `json:"status"`
	Iterations    int      `json:"iterations"`
	ProducedFiles []string `json:"produced_files"`
	// Reason says why a turn ended that was not completed (e.g.
	// "sidecar_restart" for turns found dead at start).
	Reason string `json:"reason,omitempty"`
	// Message says Reason to people, in the session's language (errtext.go).
	Message string `json:"message,omitempty"`
}

// TurnSuspendedData: the turn waited for answers when the sidecar stopped;
// it is not over. Its requests stay answerable; the last answer (or
// turn.resume) resumes it under the same taskId, and turn.interrupt ends
// it. Recorded by the host at start, never by the engine.
type TurnSuspendedData struct {
	task
	Reason          string   `json:"reason"` // sidecar_restart
	PendingRequests []string `json:"pendingRequests"`
}

// ErrorData: the engine or the model failed.
type ErrorData struct {
	task
	Error     string `json:"error"`
	ErrorType string `json:"error_type"`
	// Message says the error to people, in the session's language
	// (errtext.go); Error stays English, for logs and the model.
	Message   string `json:"message,omitempty"`
	Retriable bool   `json:"retriable"`
	Iteration int    `json:"iteration"`
	ReqID     string `json:"reqId"`
	LogTime   string `json:"logTime"`
	Stack     string `json:"stack,omitempty"`
}

// InterruptedData: the user stopped the turn.
type InterruptedData struct {
	task
	Iterations int    `json:"iterations"`
	ReqID      string `json:"reqId"`
}

// CompactingData: a compaction starts.
type CompactingData struct {
	task
	Trigger          string  `json:"trigger"` // threshold | overflow | soft
	Tokens           int     `json:"tokens"`
	Estimated        bool    `json:"estimated"`
	ContextWindow    int     `json:"contextWindow"`
	ThresholdPct     float64 `json:"thresholdPct"`
	ThresholdTokens  int     `json:"thresholdTokens"`
	OutboundMessages int     `json:"outboundMessages"`
}

// CompactedData: a compaction ended.
type CompactedData struct {
	task
	ReqID               string `json:"reqId"`
	Method              string `json:"method"` // summarized | trimmed | elided
	MessagesBefore      int    `json:"messagesBefore"`
	MessagesAfter       int    `json:"messagesAfter"`
	BoundaryIndex       *int   `json:"boundaryIndex,omitempty"`
	Model               string `json:"model,omitempty"`
	SummaryPreview      string `json:"summaryPreview,omitempty"`
	KeptUserMessages    *int   `json:"keptUserMessages,omitempty"`
	DroppedUserMessages *int   `json:"droppedUserMessages,omitempty"`
	TokensBefore        int    `json:"tokensBefore,omitempty"`
	TokensAfter         int    `json:"tokensAfter,omitempty"`
}

// QueueSteeringData: queued steering text was injected.
type QueueSteeringData struct {
	task
	Text        string                 `json:"text"`
	Attachments []llm.StoredAttachment `json:"attachments,omitempty"`
}

// LLMRequestData: a model request is about to be sent.
type LLMRequestData struct {
	task
	ReqID     string `json:"reqId"`
	LogTime   string `json:"logTime"`
	Model     string `json:"model"`
	MsgCount  int    `json:"msgCount"`
	ToolCount int    `json:"toolCount"`
	Compact   bool   `json:"compact,omitempty"`
}

// AskUserQuestionData: ask_user waits for an answer.
type AskUserQuestionData struct {
	task
	ReqID     string   `json:"reqId"`
	RequestID string   `json:"requestId"`
	Question  string   `json:"question"`
	Options   []string `json:"options"`
	AllowText bool     `json:"allowText"`
	Multi     bool     `json:"multi"`
	// Warnings and Display: text fields holding control characters, ANSI
	// escapes, bidi or invisible characters, and their escaped display forms
	// by field path (see TextWarning). Empty when the text is clean.
	Warnings []TextWarning     `json:"warnings,omitempty"`
	Display  map[string]string `json:"display,omitempty"`
}

// PlanProposedData: propose_plan waits for approval.
type PlanProposedData struct {
	task
	ReqID     string `json:"reqId"`
	RequestID string `json:"requestId"`
	Plan      string `json:"plan"`
	// Warnings and Display: text fields holding control characters, ANSI
	// escapes, bidi or invisible characters, and their escaped display forms
	// by field path (see TextWarning). Empty when the text is clean.
	Warnings []TextWarning     `json:"warnings,omitempty"`
	Display  map[string]string `json:"display,omitempty"`
}

// DirectoryRequestedData: request_directory waits for a grant.
// Path is the real path a grant covers; RequestedPath, Link and LinkTarget
// say how the model named it when that went through a symlink.
type DirectoryRequestedData struct {
	task
	ReqID          string `json:"reqId"`
	RequestID      string `json:"requestId"`
	Reason         string `json:"reason"`
	Path           string `json:"path"`
	Writable       bool   `json:"writable"`
	OutsideProject bool   `json:"outsideProject"`
	RequestedPath  string `json:"requestedPath,omitempty"`
	Link           string `json:"link,omitempty"`
	LinkTarget     string `json:"linkTarget,omitempty"`
	// Warnings and Display: text fields holding control characters, ANSI
	// escapes, bidi or invisible characters, and their escaped display forms
	// by field path (see TextWarning). Empty when the text is clean.
	Warnings []TextWarning     `json:"warnings,omitempty"`
	Display  map[string]string `json:"display,omitempty"`
}

// LLMRetryData: a transient network error is being retried.
type LLMRetryData struct {
	task
	Attempt   int    `json:"attempt"`
	Max       int    `json:"max"`
	Reason    string `json:"reason"`
	WaitMS    int64  `json:"waitMs"`
	Iteration int    `json:"iteration"`
	ReqID     string `json:"reqId"`
}

// SessionNamedData: the session got a name.
type SessionNamedData struct {
	task
	Name   string `json:"name"`
	Source string `json:"source"` // auto | user
}

func (TurnStartData) eventType() EventType          { return EventTurnStart }
func (DeltaData) eventType() EventType              { return EventAssistantDelta }
func (AssistantMessageData) eventType() EventType   { return EventAssistantMessage }
func (ToolProposedData) eventType() EventType       { return EventToolProposed }
func (PermissionRequiredData) eventType() EventType { return EventPermissionRequired }
func (ToolStartedData) eventType() EventType        { return EventToolStarted }
func (ToolFinishedData) eventType() EventType       { return EventToolFinished }
func (IterationEndData) eventType() EventType       { return EventIterationEnd }
func (TurnEndData) eventType() EventType            { return EventTurnEnd }
func (ErrorData) eventType() EventType              { return EventError }
func (InterruptedData) eventType() EventType        { return EventInterrupted }
func (CompactingData) eventType() EventType         { return EventCompacting }
func (CompactedData) eventType() EventType          { return EventCompacted }
func (QueueSteeringData) eventType() EventType      { return EventQueueSteering }
func (LLMRequestData) eventType() EventType         { return EventLLMRequest }
func (AskUserQuestionData) eventType() EventType    { return EventAskUserQuestion }
func (PlanProposedData) eventType() EventType       { return EventPlanProposed }
func (DirectoryRequestedData) eventType() EventType { return EventDirectoryRequested }
func (LLMRetryData) eventType() EventType           { return EventLLMRetry }
func (SessionNamedData) eventType() EventType       { return EventSessionNamed }
func (TurnSuspendedData) eventType() EventType      { return EventTurnSuspended }

// RawData is event data of a type this package does not define (forwarded
// subagent events, host events); it marshals as the raw JSON object.
type RawData struct {
	Kind EventType
	JSON json.RawMessage
}

func (r RawData) eventType() EventType { return r.Kind }

// MarshalJSON returns the raw object.
func (r RawData) MarshalJSON() ([]byte, error) { return r.JSON, nil }
