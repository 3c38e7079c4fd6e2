package engine

import (
	"context"
	"fmt"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// An MCP server's elicitation during a tool call goes the way of the
// interactive tools: the engine puts its interactor in the call's context
// (tools.WithElicitor), emits elicitation_requested with a fresh requestId
// for the call, then asks the host's handler, which must also implement
// tools.Elicitor. The call's context ends with the turn, so an elicitation
// never outlives its turn.

var _ tools.Elicitor = interactor{}

// Elicit implements tools.Elicitor.
func (x interactor) Elicit(ctx context.Context, el tools.Elicitation) (tools.ElicitationAnswer, error) {
	ci, ok := ctx.Value(turnKey{}).(*callInfo)
	if !ok {
		return tools.ElicitationAnswer{}, fmt.Errorf("elicitation outside a tool call: %w", ErrNoInteractor)
	}
	x.e.mu.Lock()
	h, _ := x.e.interactor.(tools.Elicitor)
	x.e.mu.Unlock()
	if h == nil {
		return tools.ElicitationAnswer{}, fmt.Errorf("elicitation: %w", ErrNoInteractor)
	}
	requestID := newID("elicit_")
	var c cardCheck
	c.text("server", el.Server)
	c.prose("message", el.Message)
	c.text("url", el.URL)
	d := protocol.ElicitationRequestedData{
		TaskID: ci.t.taskID, ReqID: ci.callID, RequestID: requestID,
		Server: el.Server, Message: el.Message, Mode: el.Mode, RequestedSchema: el.RequestedSchema,
		URL: el.URL, Host: el.Host, ElicitationID: el.ElicitationID,
		Warnings: c.warnings, Display: c.display,
	}
	if !ci.t.emitFromTool(ctx, Event{protocol.EventElicitationRequested, d}) {
		return tools.ElicitationAnswer{}, context.Canceled
	}
	ctx = context.WithValue(ctx, turnKey{}, &callInfo{t: ci.t, callID: ci.callID, requestID: requestID})
	return h.Elicit(ctx, el)
}
