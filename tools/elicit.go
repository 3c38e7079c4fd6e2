package tools

import (
	"context"
	"encoding/json"
)

// MCP elicitation's vocabulary: an MCP server asks the user for input during
// one of its tool calls. The mcp package reads the request and checks it;
// the engine implements Elicitor (it emits elicitation_requested, the host
// persists the request and waits for the answer) and puts it in the context
// of every tool call, so a server's request reaches the session whose call
// it belongs to, and only that one.

// Elicitation is what an MCP server asks, checked: a form whose schema is a
// flat object of primitive properties, or an https: (or loopback http:) URL.
type Elicitation struct {
	Server          string          `json:"server"`
	Message         string          `json:"message"`
	Mode            string          `json:"mode"` // form or url
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	Host            string          `json:"host,omitempty"` // URL's host, IDNs in punycode
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// ElicitationAnswer is the user's answer: accept (with Content in form
// mode), decline or cancel.
type ElicitationAnswer struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Elicitor asks the user an MCP server's elicitation on behalf of the tool
// call whose context it is given, and waits for the answer or ctx. An error
// means there is no answer (the turn ended, the request could not be shown):
// the server gets cancel.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitationAnswer, error)
}

type elicitorKey struct{}

// WithElicitor returns ctx carrying e: the engine gives it to every tool
// call.
func WithElicitor(ctx context.Context, e Elicitor) context.Context {
	return context.WithValue(ctx, elicitorKey{}, e)
}

// ElicitorFrom returns the Elicitor of a tool call's context, or nil outside
// a tool call.
func ElicitorFrom(ctx context.Context) Elicitor {
	e, _ := ctx.Value(elicitorKey{}).(Elicitor)
	return e
}
