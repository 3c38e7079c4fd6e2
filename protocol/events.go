package protocol

// EventType names a session event (session.event's type).
type EventType string

// The event types.
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
	EventTurnSuspended      EventType = "turn_suspended"
	EventRequestResolved    EventType = "request_resolved"
)

// EventTypes lists every event type, in the order of Events.
func EventTypes() []EventType {
	specs := Events()
	types := make([]EventType, len(specs))
	for i, e := range specs {
		types[i] = e.Type
	}
	return types
}

// Interactive reports whether events of this type wait for an answer through
// a requestId (request.respond).
func (t EventType) Interactive() bool {
	switch t {
	case EventPermissionRequired, EventAskUserQuestion, EventPlanProposed, EventDirectoryRequested, EventElicitationRequested:
		return true
	}
	return false
}

// EventData is the data of a session event: one of the *Data types of this
// file (the engine emits them, the store records their JSON).
type EventData interface {
	// EventTaskID returns the id of the turn the event belongs to (its
	// taskId; "" for a session_named of a rename).
	EventTaskID() string
}

// TurnStartData: a turn begins.
type TurnStartData struct {
	TaskID string `json:"taskId"`
	// Resumed: this continues a turn (same taskId) that was suspended or
	// died with its calls unanswered; it is not a new turn.
	Resumed bool `json:"resumed,omitempty"`
	// Input is the user's text ("" for retry and resume).
	Input           string          `json:"input"`
	AttachmentCount int             `json:"attachmentCount,omitempty"`
	Attachments     []AttachmentRef `json:"attachments,omitempty"`
}

// DeltaData: a streamed increment of text (assistant_delta) or reasoning
// (reasoning_delta).
type DeltaData struct {
	TaskID string `json:"taskId"`
	Text   string `json:"text"`
	ReqID  string `json:"reqId"`
}

// Usage is a model response's token usage.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
}

// AssistantMessageData: one complete model response.
type AssistantMessageData struct {
	TaskID    string `json:"taskId"`
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
	// ToolCalls are the names of the tools the response calls.
	ToolCalls []string `json:"tool_calls"`
	Usage     *Usage   `json:"usage,omitempty"`
	ReqID     string   `json:"reqId"`
	LogTime   string   `json:"logTime"`
}

// ToolProposedData: the model asked for a tool call.
type ToolProposedData struct {
	TaskID string `json:"taskId"`
	// ReqID is the tool call id.
	ReqID string `json:"reqId"`
	Name  string `json:"name"`
	// Arguments are the decoded arguments, byte for byte what the tool gets.
	Arguments map[string]any `json:"arguments"`
}

// Kinds of TextWarning.
const (
	WarnControl   = "control"   // C0/C1 control characters other than tab and newline, line separators
	WarnANSI      = "ansi"      // an escape sequence (ESC or CSI)
	WarnBidi      = "bidi"      // bidirectional overrides, embeddings, isolates and marks
	WarnInvisible = "invisible" // zero-width and other invisible characters
	WarnBlank     = "blank"     // space separators other than U+0020 and blank look-alikes
)

// TextWarning flags a card text field holding control characters, ANSI
// escapes, bidi or invisible characters, or blanks that are not spaces.
type TextWarning struct {
	// Field is the field's path in the event's data: "question",
	// "options[1]", "arguments.command", "arguments.todos[0].content".
	Field string `json:"field"`
	// Kind is control, ansi, bidi, invisible or blank.
	Kind string `json:"kind"`
}

// PermissionRequiredData: a call waits for approval; answer with
// ApprovalResponse.
type PermissionRequiredData struct {
	TaskID    string         `json:"taskId"`
	ReqID     string         `json:"reqId"`
	RequestID string         `json:"requestId"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Reason    string         `json:"reason"`
	Category  string         `json:"category"`
	RiskLevel string         `json:"riskLevel,omitempty"`
	// Command is the executable an always_command grant would cover; ""
	// when always_command is not offered.
	Command string `json:"command"`
	// AlwaysCommand says whether always_command is offered.
	AlwaysCommand bool `json:"alwaysCommand"`
	// AlwaysCommandNote says why always_command is not offered.
	AlwaysCommandNote string `json:"alwaysCommandNote,omitempty"`
	// ToolGrant is the name an always_tool answer grants (what
	// session.grants lists): the tool's name, or "mcp:<server>/<tool>" for
	// an MCP tool, whether called directly or through mcp_call_tool. On
	// every card this sidecar emits; absent from cards an older sidecar
	// stored.
	ToolGrant string `json:"toolGrant,omitempty"`
	// Via is the generic tool the model called ("mcp_call_tool") when name
	// and arguments are those of the real tool it named; absent for a
	// direct call.
	Via string `json:"via,omitempty"`
	// Diff is what a file tool's call (write_file, replace_in_file,
	// apply_patch, apply_unified_diff) will change, computed from the
	// files when the card is made; absent for other tools and when the
	// change cannot be computed (the call would fail).
	Diff *CardDiff `json:"diff,omitempty"`
	// Warnings and Display: flagged text fields and their escaped display
	// forms by field path; absent when every field is clean.
	Warnings []TextWarning     `json:"warnings,omitempty"`
	Display  map[string]string `json:"display,omitempty"`
}

// CardDiff is the unified diff of an approval card.
type CardDiff struct {
	// Unified is a unified diff ("--- a/<path>", "+++ b/<path>", hunks
	// with 3 lines of context) of every file the call changes, in the
	// order it touches them; "/dev/null" names the missing side of a
	// created or deleted file, and a binary file is one "Binary files …
	// differ" line. At most 64 KiB.
	Unified string `json:"unified"`
	// Truncated: the diff was cut at a line end to fit 64 KiB.
	Truncated bool `json:"truncated,omitempty"`
}

// ToolStartedData: a call runs.
type ToolStartedData struct {
	TaskID string `json:"taskId"`
	ReqID  string `json:"reqId"`
	Name   string `json:"name"`
	// StartTime is unix milliseconds.
	StartTime int64 `json:"startTime,omitempty"`
}

// ToolStatus is how a tool call ended.
type ToolStatus string

// The tool statuses.
const (
	ToolOK          ToolStatus = "ok"
	ToolError       ToolStatus = "error"
	ToolDenied      ToolStatus = "denied"
	ToolInterrupted ToolStatus = "interrupted"
)

// ToolStatuses lists the statuses.
var ToolStatuses = []ToolStatus{ToolOK, ToolError, ToolDenied, ToolInterrupted}

// ToolFinishedData: a call ended.
type ToolFinishedData struct {
	TaskID string     `json:"taskId"`
	ReqID  string     `json:"reqId"`
	Name   string     `json:"name"`
	Status ToolStatus `json:"status"`
	Reason string     `json:"reason,omitempty"`
	// Duration is in milliseconds.
	Duration      int64  `json:"duration,omitempty"`
	ResultPreview string `json:"result_preview,omitempty"`
	// ParentReqID is set on a subagent's call forwarded to the UI: the
	// explore call that ran it.
	ParentReqID string `json:"parentReqId,omitempty"`
}

// IterationEndData: a model call and its tools are done.
type IterationEndData struct {
	TaskID    string `json:"taskId"`
	Iteration int    `json:"iteration"`
}

// TurnStatus is how a turn ended.
type TurnStatus string

// The turn statuses.
const (
	TurnCompleted     TurnStatus = "completed"
	TurnMaxIterations TurnStatus = "max_iterations_exceeded"
	TurnInterrupted   TurnStatus = "interrupted"
	TurnError         TurnStatus = "error"
)

// TurnStatuses lists the statuses.
var TurnStatuses = []TurnStatus{TurnCompleted, TurnMaxIterations, TurnInterrupted, TurnError}

// TurnEndData: the turn is over (exactly one per turn).
type TurnEndData struct {
	TaskID     string     `json:"taskId"`
	Status     TurnStatus `json:"status"`
	Iterations int        `json:"iterations"`
	// ProducedFiles lists every file the turn wrote or created
	// (workspace-relative).
	ProducedFiles []string `json:"produced_files"`
	// Reason says why a turn ended that was not completed
	// ("sidecar_restart", "interrupted_while_suspended").
	Reason string `json:"reason,omitempty"`
	// Message says Reason to people, in the session's language.
	Message string `json:"message,omitempty"`
}

// TurnSuspendedData: the turn waited for answers when the previous sidecar
// process stopped; it is not over.
type TurnSuspendedData struct {
	TaskID string `json:"taskId"`
	// Reason is sidecar_restart.
	Reason          string   `json:"reason"`
	PendingRequests []string `json:"pendingRequests"`
}

// The outcomes of a request_resolved event.
const (
	// An approval answered allow (once, always for the tool or the
	// command) or a plan approved.
	OutcomeApproved = "approved"
	// An approval answered deny, or a plan rejected.
	OutcomeDenied = "denied"
	// A question answered.
	OutcomeAnswered = "answered"
	// A directory request granted or refused.
	OutcomeGranted = "granted"
	OutcomeRefused = "refused"
	// An approval not answered within the session's approval timeout (it
	// was denied).
	OutcomeTimeout = "timeout"
	// The request's turn ended (interrupted, failed, closed) before an
	// answer; it can no longer be answered.
	OutcomeTurnEnded = "turn_ended"
	// An elicitation's outcomes (accepted, declined, cancelled) are in
	// elicitation.go.
)

// RequestResolvedData: a request (permission_required, ask_user_question,
// plan_proposed, directory_requested) is no longer open, whoever or
// whatever closed it; a shell closes its card. Recorded once per request.
type RequestResolvedData struct {
	TaskID    string `json:"taskId"`
	RequestID string `json:"requestId"`
	// Kind is the request's kind (approval, question, plan, directory).
	Kind string `json:"kind" enum:"RequestKind"`
	// Outcome is one of approved, denied, answered, granted, refused,
	// timeout, turn_ended; for an elicitation accepted, declined,
	// cancelled or turn_ended.
	Outcome string `json:"outcome"`
}

// EventErrorData is the data of an error event: the engine or the model
// failed. (ErrorData is a JSON-RPC error's data.)
type EventErrorData struct {
	TaskID string `json:"taskId"`
	Error  string `json:"error"`
	// ErrorType is e.g. network, engine, config or internal.
	ErrorType string `json:"error_type"`
	// Message says the error to people, in the session's language (Error
	// stays English, for logs); absent for an error type without a text.
	Message string `json:"message,omitempty"`
	// Retriable: turn.retry may re-run the model.
	Retriable bool   `json:"retriable"`
	Iteration int    `json:"iteration"`
	ReqID     string `json:"reqId"`
	LogTime   string `json:"logTime"`
	Stack     string `json:"stack,omitempty"`
}

// InterruptedData: the turn was interrupted.
type InterruptedData struct {
	TaskID     string `json:"taskId"`
	Iterations int    `json:"iterations"`
	// ReqID is the turn's last model request; absent when turn.interrupt
	// ended a suspended turn (no model request of this process).
	ReqID string `json:"reqId,omitempty"`
}

// CompactingData: a compaction starts.
type CompactingData struct {
	TaskID string `json:"taskId"`
	// Trigger is threshold, overflow or soft.
	Trigger          string  `json:"trigger"`
	Tokens           int     `json:"tokens"`
	Estimated        bool    `json:"estimated"`
	ContextWindow    int     `json:"contextWindow"`
	ThresholdPct     float64 `json:"thresholdPct"`
	ThresholdTokens  int     `json:"thresholdTokens"`
	OutboundMessages int     `json:"outboundMessages"`
}

// CompactedData: a compaction ended.
type CompactedData struct {
	TaskID string `json:"taskId"`
	ReqID  string `json:"reqId"`
	// Method is summarized, trimmed or elided.
	Method              string `json:"method"`
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

// QueueSteeringData: steering text was injected.
type QueueSteeringData struct {
	TaskID      string          `json:"taskId"`
	Text        string          `json:"text"`
	Attachments []AttachmentRef `json:"attachments,omitempty"`
}

// LLMRequestData: a model request is about to be sent.
type LLMRequestData struct {
	TaskID    string `json:"taskId"`
	ReqID     string `json:"reqId"`
	LogTime   string `json:"logTime"`
	Model     string `json:"model"`
	MsgCount  int    `json:"msgCount"`
	ToolCount int    `json:"toolCount"`
	// Compact is set on a compaction's summary request.
	Compact bool `json:"compact,omitempty"`
}

// AskUserQuestionData: ask_user waits; answer with QuestionResponse.
type AskUserQuestionData struct {
	TaskID    string            `json:"taskId"`
	ReqID     string            `json:"reqId"`
	RequestID string            `json:"requestId"`
	Question  string            `json:"question"`
	Options   []string          `json:"options"`
	AllowText bool              `json:"allowText"`
	Multi     bool              `json:"multi"`
	Warnings  []TextWarning     `json:"warnings,omitempty"`
	Display   map[string]string `json:"display,omitempty"`
}

// PlanProposedData: propose_plan waits; answer with PlanResponse.
type PlanProposedData struct {
	TaskID    string            `json:"taskId"`
	ReqID     string            `json:"reqId"`
	RequestID string            `json:"requestId"`
	Plan      string            `json:"plan"`
	Warnings  []TextWarning     `json:"warnings,omitempty"`
	Display   map[string]string `json:"display,omitempty"`
}

// DirectoryRequestedData: request_directory waits; answer with
// DirectoryResponse. Path is the real path a grant covers; RequestedPath,
// Link and LinkTarget say how the model named it through a symlink.
type DirectoryRequestedData struct {
	TaskID         string            `json:"taskId"`
	ReqID          string            `json:"reqId"`
	RequestID      string            `json:"requestId"`
	Reason         string            `json:"reason"`
	Path           string            `json:"path"`
	Writable       bool              `json:"writable"`
	OutsideProject bool              `json:"outsideProject"`
	RequestedPath  string            `json:"requestedPath,omitempty"`
	Link           string            `json:"link,omitempty"`
	LinkTarget     string            `json:"linkTarget,omitempty"`
	Warnings       []TextWarning     `json:"warnings,omitempty"`
	Display        map[string]string `json:"display,omitempty"`
}

// LLMRetryData: a transient network error is retried.
type LLMRetryData struct {
	TaskID    string `json:"taskId"`
	Attempt   int    `json:"attempt"`
	Max       int    `json:"max"`
	Reason    string `json:"reason"`
	WaitMS    int64  `json:"waitMs"`
	Iteration int    `json:"iteration"`
	ReqID     string `json:"reqId"`
}

// SessionNamedData: the session got a title.
type SessionNamedData struct {
	// TaskID is "" for a rename (session.rename).
	TaskID string `json:"taskId"`
	Name   string `json:"name"`
	// Source is auto or user.
	Source string `json:"source"`
}

// EventTaskID implements EventData.
func (d TurnStartData) EventTaskID() string          { return d.TaskID }
func (d DeltaData) EventTaskID() string              { return d.TaskID }
func (d AssistantMessageData) EventTaskID() string   { return d.TaskID }
func (d ToolProposedData) EventTaskID() string       { return d.TaskID }
func (d PermissionRequiredData) EventTaskID() string { return d.TaskID }
func (d ToolStartedData) EventTaskID() string        { return d.TaskID }
func (d ToolFinishedData) EventTaskID() string       { return d.TaskID }
func (d IterationEndData) EventTaskID() string       { return d.TaskID }
func (d TurnEndData) EventTaskID() string            { return d.TaskID }
func (d TurnSuspendedData) EventTaskID() string      { return d.TaskID }
func (d RequestResolvedData) EventTaskID() string    { return d.TaskID }
func (d EventErrorData) EventTaskID() string         { return d.TaskID }
func (d InterruptedData) EventTaskID() string        { return d.TaskID }
func (d CompactingData) EventTaskID() string         { return d.TaskID }
func (d CompactedData) EventTaskID() string          { return d.TaskID }
func (d QueueSteeringData) EventTaskID() string      { return d.TaskID }
func (d LLMRequestData) EventTaskID() string         { return d.TaskID }
func (d AskUserQuestionData) EventTaskID() string    { return d.TaskID }
func (d PlanProposedData) EventTaskID() string       { return d.TaskID }
func (d DirectoryRequestedData) EventTaskID() string { return d.TaskID }
func (d LLMRetryData) EventTaskID() string           { return d.TaskID }
func (d SessionNamedData) EventTaskID() string       { return d.TaskID }
