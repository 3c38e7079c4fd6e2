package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools"
)

// MCP elicitation on the session's side. The engine emits
// elicitation_requested (stored, with its pending request of kind
// elicitation, before any window sees it) and asks the bridge, which waits
// for request.respond like for a question. The answer goes to the MCP call
// that is waiting for it, and only to it: an elicitation is never answered
// ahead (no pre-answer by tool call) and never resumes a turn, because the
// server's call does not outlive its connection.
//
// When the wait ends without an answer, the request is closed here, before
// the tool call returns (so before the turn's end): answered cancel (what the
// server gets), with request_resolved {outcome: turn_ended} (the turn was
// interrupted or ended) or {outcome: timeout} (the MCP call's timeout
// passed). At start, the elicitations a dead process left open are closed
// the same way (turn_ended): their servers' calls died with it.

// cancelResponse is the stored answer of an elicitation nobody answered.
var cancelResponse = json.RawMessage(`{"action":"cancel"}`)

var _ tools.Elicitor = interactor{}

// Elicit implements tools.Elicitor.
func (x interactor) Elicit(ctx context.Context, _ tools.Elicitation) (tools.ElicitationAnswer, error) {
	rid := engine.RequestID(ctx)
	if rid == "" {
		return tools.ElicitationAnswer{}, fmt.Errorf("elicitation: %w: no request id", ErrInvalidRequest)
	}
	resp, err := x.h.await(ctx, rid, "", false)
	if err != nil {
		x.h.closeElicitation(ctx, rid)
		return tools.ElicitationAnswer{}, err
	}
	var r protocol.ElicitationResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		return tools.ElicitationAnswer{}, fmt.Errorf("answer of %s: %w", rid, err)
	}
	if bytes.Equal(bytes.TrimSpace(r.Content), []byte("null")) {
		r.Content = nil
	}
	return tools.ElicitationAnswer{Action: r.Action, Content: r.Content}, nil
}

// closeElicitation closes an elicitation whose wait ended (ctx is done)
// without an answer; an answer given meanwhile wins.
func (h *Session) closeElicitation(ctx context.Context, requestID string) {
	outcome, note := protocol.OutcomeTurnEnded, "the turn ended before an answer"
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		outcome, note = protocol.OutcomeTimeout, "the MCP tool call timed out before an answer"
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	p, err := h.s.opts.Store.Request(wctx, requestID)
	if err == nil {
		// The cancel and its request_resolved: one transaction.
		err = h.answerResolved(wctx, p, cancelResponse, note, outcome)
	}
	if err != nil && !errors.Is(err, store.ErrAlreadyAnswered) {
		h.s.log.Warn("close elicitation", "session", h.id, "request", requestID, "err", err)
	}
}

// closeElicitationsAtStart closes the elicitations of a session that a dead
// process left open (RecoverInterrupted calls it before it looks at what
// is pending): answered cancel, with request_resolved {outcome:
// turn_ended}, in the session's log.
func closeElicitationsAtStart(ctx context.Context, st *store.Store, sessionID string, now time.Time) error {
	pend, err := st.PendingRequests(ctx, sessionID)
	if err != nil {
		return err
	}
	for _, p := range pend {
		if p.Kind != store.KindElicitation {
			continue
		}
		in, err := durableInput(resolvedEvent(p.TurnID, p.RequestID, p.Kind, protocol.OutcomeTurnEnded), nil, "")
		if err != nil {
			return err
		}
		in.TurnID, in.Time = p.TurnID, now
		// The cancel and its request_resolved: one transaction.
		in.Answer = &store.Answer{RequestID: p.RequestID, Response: cancelResponse, Note: "the MCP server's call ended with the previous sidecar process"}
		if _, err := st.Append(ctx, sessionID, in); err != nil {
			if errors.Is(err, store.ErrAlreadyAnswered) {
				continue
			}
			return err
		}
	}
	return nil
}

// elicitationOutcome is the request_resolved outcome of an answer.
func elicitationOutcome(resp json.RawMessage) string {
	var r protocol.ElicitationResponse
	_ = json.Unmarshal(resp, &r) // checked by validateElicitation
	switch protocol.ElicitationAction(r.Action) {
	case protocol.ElicitationAccept:
		return protocol.OutcomeAccepted
	case protocol.ElicitationDecline:
		return protocol.OutcomeDeclined
	}
	return protocol.OutcomeCancelled
}

// validateElicitation checks an answer of an elicitation against its
// request: an action, content with accept only, and in form mode a content
// valid against the request's requestedSchema (absent: an empty object),
// the field at fault named.
func validateElicitation(req store.PendingRequest, raw json.RawMessage) error {
	var r protocol.ElicitationResponse
	if err := protocol.DecodeParams(raw, &r); err != nil {
		return prefixField(err)
	}
	switch protocol.ElicitationAction(r.Action) {
	case protocol.ElicitationAccept, protocol.ElicitationDecline, protocol.ElicitationCancel:
	default:
		return protocol.InvalidField("response.action", "must be accept, decline or cancel")
	}
	content := bytes.TrimSpace(r.Content)
	if bytes.Equal(content, []byte("null")) {
		content = nil
	}
	if content != nil && protocol.ElicitationAction(r.Action) != protocol.ElicitationAccept {
		return protocol.InvalidField("response.content", "goes with action accept only")
	}
	var d protocol.ElicitationRequestedData
	if err := json.Unmarshal(req.Data, &d); err != nil {
		return fmt.Errorf("read elicitation %s: %w", req.RequestID, err)
	}
	if protocol.ElicitationAction(r.Action) != protocol.ElicitationAccept {
		return nil
	}
	if d.Mode != protocol.ElicitationForm {
		if content != nil {
			return protocol.InvalidField("response.content", "a url elicitation takes no content (accept means the user agreed to open the URL)")
		}
		return nil
	}
	if content == nil {
		content = []byte("{}")
	}
	if _, err := objectKeys(content); err != nil {
		return protocol.InvalidField("response.content", fmt.Sprintf("must be a JSON object of the form's fields: %v", err))
	}
	err := mcp.ValidateContent(d.RequestedSchema, content)
	var ce *mcp.ContentError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.Field != "":
		return protocol.InvalidField("response.content."+ce.Field, ce.Msg)
	case errors.As(err, &ce):
		return protocol.InvalidField("response.content", ce.Msg)
	}
	return protocol.InvalidField("response.content", err.Error())
}
