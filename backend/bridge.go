package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools"
)

// The bridge answers an engine's approvals and interactive tools from
// durable pending requests. The engine emits the interactive event (with its
// requestId) before calling the bridge; the event's pending request is
// stored in the event's transaction. The bridge then waits for
// request.respond (or the session's approval timeout).

// denyResponse is what a timed-out approval is answered with.
var denyResponse = json.RawMessage(`{"outcome":"deny"}`)

// await blocks until the request is answered, ctx ends or the approval
// timeout passes, and returns the response. callID lets a resumed turn reuse
// an answer given to the request of the turn that died.
func (h *Session) await(ctx context.Context, requestID, callID string, timed bool) (json.RawMessage, error) {
	st := h.s.opts.Store
	ch := make(chan []byte, 1)
	h.mu.Lock()
	if resp, ok := h.preAnswered[callID]; ok && callID != "" {
		delete(h.preAnswered, callID)
		h.mu.Unlock()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := st.AnswerRequest(wctx, h.id, requestID, resp, "answered before the sidecar restarted"); err != nil && !errors.Is(err, store.ErrNotFound) {
			h.s.log.Warn("answer resumed request", "session", h.id, "request", requestID, "err", err)
		}
		return resp, nil
	}
	h.waiters[requestID] = ch
	timeout := h.timeout
	h.mu.Unlock()
	defer func() {
		// The request's event moved the session to awaiting; the last
		// answer moves it back to running.
		h.mu.Lock()
		delete(h.waiters, requestID)
		if len(h.waiters) == 0 && h.state == StateAwaiting && !h.closed {
			_ = h.moveLocked(StateRunning, nil) // logged when illegal
		}
		h.mu.Unlock()
	}()
	// An answer given before the waiter was registered is in the store.
	req, err := st.Request(ctx, requestID)
	if err == nil && req.Answered && req.Response != nil {
		return req.Response, nil
	}
	var expire <-chan time.Time
	if timed && timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-expire:
		note := fmt.Sprintf("no answer within the session's approval timeout of %s: the call was not run", timeout)
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err != nil { // the request is the one the event stored: read it again
			if req, err = st.Request(wctx, requestID); err != nil {
				return nil, fmt.Errorf("approval timeout: %w", err)
			}
		}
		// The deny and its request_resolved {timeout}: one transaction.
		err = h.answerResolved(wctx, req, denyResponse, note, protocol.OutcomeTimeout)
		if errors.Is(err, store.ErrAlreadyAnswered) {
			// Answered in the meantime: the first answer wins.
			select {
			case resp := <-ch:
				return resp, nil
			default:
			}
			if p, err := st.Request(wctx, requestID); err == nil && p.Response != nil {
				return p.Response, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("approval timeout: %w", err)
		}
		h.s.log.Info("approval timed out", "session", h.id, "request", requestID, "timeout", timeout)
		engine.NoteTimeout(ctx, timeout) // the model reads no answer, not a denial
		return denyResponse, nil
	}
}

// Deliver hands an answer to the turn waiting for it; it reports false when
// no turn of this process waits (the engine is not loaded, e.g. after a
// restart).
func (h *Session) Deliver(requestID, callID string, resp []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.waiters[requestID]; ok {
		select {
		case ch <- resp:
		default:
		}
		return true
	}
	if callID != "" {
		h.preAnswered[callID] = resp
	}
	return false
}

// approve is the engine's Approver.
func (h *Session) approve(ctx context.Context, req permission.Request) (permission.Outcome, error) {
	resp, err := h.await(ctx, req.RequestID, req.ToolCallID, true)
	if err != nil {
		return permission.OutcomeDeny, err
	}
	var r protocol.ApprovalResponse
	if err := json.Unmarshal(resp, &r); err != nil {
		return permission.OutcomeDeny, fmt.Errorf("approval %s: %w", req.RequestID, err)
	}
	o, err := permission.ParseOutcome(r.Outcome)
	if err != nil {
		return permission.OutcomeDeny, err
	}
	if o == permission.OutcomeDeny && r.Note != "" {
		engine.NoteDenial(ctx, r.Note)
	}
	if o == permission.OutcomeAlwaysTool || o == permission.OutcomeAlwaysCommand {
		h.mu.Lock()
		h.grantsNew = true
		h.mu.Unlock()
	}
	return o, nil
}

// interactor is the engine's tools.Interactor for one session.
type interactor struct{ h *Session }

var _ tools.Interactor = interactor{}

func (x interactor) wait(ctx context.Context, callID string, dst any) error {
	rid := engine.RequestID(ctx)
	if rid == "" {
		return fmt.Errorf("interactive tool %s: %w: no request id", callID, ErrInvalidRequest)
	}
	resp, err := x.h.await(ctx, rid, callID, false)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp, dst); err != nil {
		return fmt.Errorf("answer of %s: %w", rid, err)
	}
	return nil
}

// AskUser implements tools.Interactor.
func (x interactor) AskUser(ctx context.Context, callID string, _ tools.Question) (string, error) {
	var r protocol.QuestionResponse
	if err := x.wait(ctx, callID, &r); err != nil {
		return "", err
	}
	return r.Answer, nil
}

// ProposePlan implements tools.Interactor.
func (x interactor) ProposePlan(ctx context.Context, callID string, _ tools.Plan) (tools.PlanAnswer, error) {
	var r protocol.PlanResponse
	if err := x.wait(ctx, callID, &r); err != nil {
		return tools.PlanAnswer{}, err
	}
	return tools.PlanAnswer{Approved: r.Approved, Feedback: r.Feedback}, nil
}

// RequestDirectory implements tools.Interactor.
func (x interactor) RequestDirectory(ctx context.Context, callID string, d tools.DirRequest) (tools.DirAnswer, error) {
	var r protocol.DirectoryResponse
	if err := x.wait(ctx, callID, &r); err != nil {
		return tools.DirAnswer{}, err
	}
	ans := tools.DirAnswer{Granted: r.Granted, Path: r.Path, Writable: d.Writable}
	if r.Writable != nil {
		ans.Writable = *r.Writable
	}
	if ans.Path == "" {
		ans.Path = d.Path
	}
	if ans.Granted {
		h := x.h
		h.mu.Lock()
		h.grantsNew = true
		h.mu.Unlock()
	}
	return ans, nil
}

// resolvedOutcome is the request_resolved outcome of an answer of a request
// of kind (a store kind).
func resolvedOutcome(kind string, resp json.RawMessage) string {
	switch kind {
	case store.KindApproval:
		var r protocol.ApprovalResponse
		if json.Unmarshal(resp, &r) == nil && r.Outcome != "" && r.Outcome != string(permission.OutcomeDeny) {
			return protocol.OutcomeApproved
		}
		return protocol.OutcomeDenied
	case store.KindPlan:
		var r protocol.PlanResponse
		if json.Unmarshal(resp, &r) == nil && r.Approved {
			return protocol.OutcomeApproved
		}
		return protocol.OutcomeDenied
	case store.KindDirectory:
		var r protocol.DirectoryResponse
		if json.Unmarshal(resp, &r) == nil && r.Granted {
			return protocol.OutcomeGranted
		}
		return protocol.OutcomeRefused
	case store.KindElicitation:
		return elicitationOutcome(resp) // elicitation.go
	}
	return protocol.OutcomeAnswered
}

// resolvedEvent is the request_resolved event of a request of turnID.
func resolvedEvent(turnID, requestID, kind, outcome string) engine.Event {
	d := protocol.RequestResolvedData{RequestID: requestID, Kind: kind, Outcome: outcome}
	d.TaskID = turnID
	return engine.Event{Type: protocol.EventRequestResolved, Data: d}
}

// closedResolved is store.EventInput.Resolved for requests a turn_end
// closes.
func closedResolved(turnID, requestID, kind string) (string, json.RawMessage) {
	b, _ := json.Marshal(protocol.RequestResolvedData{TaskID: turnID, RequestID: requestID, Kind: kind, Outcome: protocol.OutcomeTurnEnded}) // strings only
	return string(protocol.EventRequestResolved), b
}

// answerResolved stores the answer to request p and its request_resolved
// {outcome} in one transaction, so a crash never keeps an answered request
// without the event that closes its card. It returns once both are
// committed and the event went to the subscribers (before the answer is
// delivered: the event precedes what the answer causes). An unknown or
// already answered request is ErrNotFound or ErrAlreadyAnswered and
// nothing is stored.
func (h *Session) answerResolved(ctx context.Context, p store.PendingRequest, resp json.RawMessage, note, outcome string) error {
	in, err := durableInput(resolvedEvent(p.TurnID, p.RequestID, p.Kind, outcome), nil, "")
	if err != nil {
		return err
	}
	in.TurnID = p.TurnID
	in.Answer = &store.Answer{RequestID: p.RequestID, Response: resp, Note: note}
	done := make(chan error, 1)
	h.deltas.cut()
	h.s.opts.Store.Enqueue(h.id, in, func(ev store.Event, err error) {
		if err == nil {
			h.broadcast(ev)
		}
		select {
		case done <- err:
		default:
		}
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordResolved records the request_resolved event of a request this
// process answered or closed; it goes to every subscriber and stays in the
// log (a window that reconnects closes its card too).
func (h *Session) recordResolved(turnID, requestID, kind, outcome string) {
	if err := h.recordEvent(resolvedEvent(turnID, requestID, kind, outcome), turnID, false); err != nil {
		h.s.log.Warn("record request_resolved", "session", h.id, "request", requestID, "err", err)
	}
}
