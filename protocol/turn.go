package protocol

import "encoding/json"

// Attachment is an attachment as a client sends it with turn.start.
type Attachment struct {
	Name string `json:"name"`
	// MimeType is image/*, audio/* or video/*; it must match the data
	// URL's type when both are given.
	MimeType string `json:"mimeType,omitempty"`
	// DataURL is data:<mime>;base64,<payload>.
	DataURL string `json:"dataUrl"`
}

// TurnStartParams are the params of turn.start.
type TurnStartParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// Text is at most 1 MiB; a turn needs a text or an attachment.
	Text string `json:"text,omitempty"`
	// Attachments: at most 4, each at most 10 MB, 10 MB together.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// TurnResult is the result of turn.start, turn.retry and turn.resume.
type TurnResult struct {
	// TurnID is the turnId of the turn's events.
	TurnID string `json:"turnId"`
	// Queued is the number of turns ahead of it (0: it starts now).
	Queued int `json:"queued"`
}

// TurnInterruptResult is the result of turn.interrupt.
type TurnInterruptResult struct {
	// Interrupted reports whether a turn was running (or suspended).
	Interrupted bool `json:"interrupted"`
	// Dropped are the queued turns that will never start.
	Dropped []string `json:"dropped"`
}

// TurnSteerParams are the params of turn.steer and turn.unsteer.
type TurnSteerParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// Text is at most 1 MiB.
	Text string `json:"text" rpc:"required"`
}

// TurnSteerResult is the result of turn.steer.
type TurnSteerResult struct {
	Queued bool `json:"queued"`
}

// TurnUnsteerResult is the result of turn.unsteer.
type TurnUnsteerResult struct {
	// Removed is false when the text was already injected, or unknown.
	Removed bool `json:"removed"`
}

// RequestRespondParams are the params of request.respond.
type RequestRespondParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	RequestID string `json:"requestId" rpc:"required"`
	// Response is one of ApprovalResponse, QuestionResponse, PlanResponse,
	// DirectoryResponse or ElicitationResponse, by the request's kind, with
	// exactly its keys.
	Response json.RawMessage `json:"response" rpc:"required"`
}

// RequestRespondResult is the result of request.respond.
type RequestRespondResult struct {
	Answered bool `json:"answered"`
	// Resumed is true when the answer was the last pending request of a
	// turn that died with a previous sidecar process, and that turn now
	// resumes.
	Resumed bool `json:"resumed"`
}

// Outcome is an approval's answer.
type Outcome string

// The outcomes.
const (
	OutcomeOnce Outcome = "once"
	// OutcomeAlwaysTool allows the tool for the rest of the session.
	OutcomeAlwaysTool Outcome = "always_tool"
	// OutcomeAlwaysCommand allows the executable (data.command) of a
	// run_shell call, only where the event offered it (data.alwaysCommand).
	OutcomeAlwaysCommand Outcome = "always_command"
	OutcomeDeny          Outcome = "deny"
)

// Outcomes lists the outcomes.
var Outcomes = []Outcome{OutcomeOnce, OutcomeAlwaysTool, OutcomeAlwaysCommand, OutcomeDeny}

// ApprovalResponse answers a permission_required request.
type ApprovalResponse struct {
	// Outcome is an Outcome.
	Outcome string `json:"outcome" rpc:"required" enum:"Outcome"`
	// Note, with outcome deny only, is the user's reason: the model's
	// tool result quotes it. At most 4096 bytes (MaxDenyNoteBytes).
	Note string `json:"note,omitempty"`
}

// MaxDenyNoteBytes bounds ApprovalResponse.Note.
const MaxDenyNoteBytes = 4096

// QuestionResponse answers an ask_user_question request.
type QuestionResponse struct {
	// Answer is the text; several options are joined as the UI likes.
	Answer string `json:"answer"`
}

// PlanResponse answers a plan_proposed request.
type PlanResponse struct {
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
}

// DirectoryResponse answers a directory_requested request.
type DirectoryResponse struct {
	Granted bool `json:"granted"`
	// Path picks another directory than the one asked for.
	Path string `json:"path,omitempty"`
	// Writable defaults to what was asked.
	Writable *bool `json:"writable,omitempty"`
}
