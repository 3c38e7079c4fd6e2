package backend

import (
	"context"
	"fmt"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

func (b *Backend) Respond(ctx context.Context, p protocol.RequestRespondParams) (protocol.RequestRespondResult, error) {
	st := b.opts.Store
	req, err := st.Request(ctx, p.RequestID)
	if err != nil {
		return protocol.RequestRespondResult{}, err
	}
	if req.SessionID != p.SessionID {
		return protocol.RequestRespondResult{}, fmt.Errorf("%w: request %q is not a request of session %q", ErrNotFound, p.RequestID, p.SessionID)
	}
	if err := validateResponse(req, p.Response); err != nil {
		return protocol.RequestRespondResult{}, err
	}
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.RequestRespondResult{}, err
	}
	// The answer and its request_resolved are stored in one transaction,
	// before the turn continues, so the event precedes what the answer
	// causes. It is not cancelled with the call: a window that goes away
	// while the answer is stored must not leave it stored but never handed
	// to the turn that waits for it.
	if err := h.answerResolved(context.WithoutCancel(ctx), req, p.Response, "", resolvedOutcome(req.Kind, p.Response)); err != nil {
		return protocol.RequestRespondResult{}, fmt.Errorf("answer request: %w", err)
	}
	callID := req.ToolCallID
	if req.Kind == store.KindElicitation {
		callID = "" // its answer goes to the waiting MCP call only (elicitation.go)
	}
	if h.Deliver(p.RequestID, callID, p.Response) {
		return protocol.RequestRespondResult{Answered: true}, nil
	}
	// No turn of this process waits: the request was opened before a
	// restart. The last answer resumes the turn.
	resumed, err := b.resumeIfAnswered(ctx, h, req)
	if err != nil {
		b.log.Warn("resume after answer", "session", p.SessionID, "err", err)
	}
	return protocol.RequestRespondResult{Answered: true, Resumed: resumed}, nil
}

// resumeIfAnswered resumes the turn of req when no request of the session
// is pending any more and no turn runs.
func (b *Backend) resumeIfAnswered(ctx context.Context, h *Session, req store.PendingRequest) (bool, error) {
	h.lockResume() // two last answers at once resume once
	defer h.unlockResume()
	pend, err := b.opts.Store.PendingRequests(ctx, h.ID())
	if err != nil {
		return false, err
	}
	if len(pend) > 0 || h.Running() {
		return false, nil
	}
	if _, err := h.Enqueue(ctx, Job{Kind: JobResume, ID: req.TurnID, From: req.TurnID}); err != nil {
		return false, err
	}
	return true, nil
}
