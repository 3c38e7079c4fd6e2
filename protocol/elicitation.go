package protocol

import "encoding/json"

// MCP elicitation: an MCP server asks the user for input during one of its
// tool calls (MCP's elicitation/create, form or URL mode). The sidecar shows
// it as a request of kind elicitation, opened by an elicitation_requested
// event and answered with ElicitationResponse (MCP's own answer shape).

// EventElicitationRequested: an MCP server's tool call waits for the user's
// input; answer with ElicitationResponse.
const EventElicitationRequested EventType = "elicitation_requested"

// RequestElicitation is the request kind of elicitation_requested.
const RequestElicitation RequestKind = "elicitation"

// The elicitation modes.
const (
	ElicitationForm = "form" // fill in a form described by requestedSchema
	ElicitationURL  = "url"  // open url (in the browser) and finish there
)

// ElicitationAction is the user's answer to an elicitation (MCP's action).
type ElicitationAction string

// The elicitation actions.
const (
	ElicitationAccept  ElicitationAction = "accept"  // the user gave the input (form) or consented to open the URL
	ElicitationDecline ElicitationAction = "decline" // the user refused
	ElicitationCancel  ElicitationAction = "cancel"  // the user dismissed it without choosing
)

// ElicitationActions lists the actions.
var ElicitationActions = []ElicitationAction{ElicitationAccept, ElicitationDecline, ElicitationCancel}

// The request_resolved outcomes of an elicitation, one per action.
const (
	OutcomeAccepted  = "accepted"
	OutcomeDeclined  = "declined"
	OutcomeCancelled = "cancelled"
)

// ElicitationRequestedData: an MCP server asks the user for input during the
// tool call reqId; answer with ElicitationResponse. A URL-mode request is
// only shown for an https: URL (or http: to a loopback host); the sidecar
// declines any other to the server without showing it.
type ElicitationRequestedData struct {
	TaskID string `json:"taskId"`
	// ReqID is the MCP tool call the server asks during.
	ReqID     string `json:"reqId"`
	RequestID string `json:"requestId"`
	// Server is the MCP server's name (as configured).
	Server string `json:"server"`
	// Message is the server's text: what it asks for and why.
	Message string `json:"message"`
	// Mode is form or url.
	Mode string `json:"mode"`
	// RequestedSchema (form mode) is the form: a JSON Schema of a flat
	// object whose properties are strings (with format, enum, minLength,
	// maxLength), numbers, integers (minimum, maximum) or booleans.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL (url mode) is what the user would open.
	URL string `json:"url,omitempty"`
	// Host (url mode) is URL's host as it resolves, internationalized
	// names in their ASCII (punycode) form: what a card shows plainly.
	Host string `json:"host,omitempty"`
	// ElicitationID (url mode) is the server's id of the request.
	ElicitationID string `json:"elicitationId,omitempty"`
	// Warnings and Display: flagged text fields and their escaped display
	// forms by field path; absent when every field is clean.
	Warnings []TextWarning     `json:"warnings,omitempty"`
	Display  map[string]string `json:"display,omitempty"`
}

// EventTaskID implements EventData.
func (d ElicitationRequestedData) EventTaskID() string { return d.TaskID }

// ElicitationResponse answers an elicitation_requested request: MCP's
// elicitation result. Content goes with accept in form mode only: an object
// valid against the request's requestedSchema (absent: an empty object).
type ElicitationResponse struct {
	// Action is an ElicitationAction.
	Action  string          `json:"action" rpc:"required" enum:"ElicitationAction"`
	Content json.RawMessage `json:"content,omitempty"`
}
