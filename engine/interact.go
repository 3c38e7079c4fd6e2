package engine

import (
	"context"
	"fmt"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// Interactive tools (ask_user, propose_plan, request_directory) are
// registered with the engine's own tools.Interactor: it emits the event with
// a fresh requestId, then asks the host's handler (SetInteractor), which is
// per engine so that two sessions never answer each other's questions.
type interactor struct{ e *Engine }

var _ tools.Interactor = interactor{}

// Interactor returns the handlers to register the interactive tools with.
func (e *Engine) Interactor() tools.Interactor { return interactor{e} }

// prepare emits the event and returns the host handler and a context that
// carries the request id.
func (x interactor) prepare(ctx context.Context, build func(taskID, requestID string) Event) (tools.Interactor, context.Context, error) {
	ci, ok := ctx.Value(turnKey{}).(*callInfo)
	if !ok {
		return nil, ctx, fmt.Errorf("interactive tool called outside a turn: %w", ErrNoInteractor)
	}
	x.e.mu.Lock()
	h := x.e.interactor
	x.e.mu.Unlock()
	if h == nil {
		return nil, ctx, ErrNoInteractor
	}
	requestID := newID("ask_")
	if !ci.t.emitFromTool(ctx, build(ci.t.taskID, requestID)) {
		return nil, ctx, context.Canceled
	}
	return h, context.WithValue(ctx, turnKey{}, &callInfo{t: ci.t, callID: ci.callID, requestID: requestID}), nil
}

// AskUser implements tools.Interactor.
func (x interactor) AskUser(ctx context.Context, callID string, q tools.Question) (string, error) {
	h, ctx, err := x.prepare(ctx, func(taskID, rid string) Event {
		opts := q.Options
		if opts == nil {
			opts = []string{}
		}
		var c cardCheck
		c.prose("question", q.Question)
		for i, o := range opts {
			c.prose(fmt.Sprintf("options[%d]", i), o)
		}
		return Event{protocol.EventAskUserQuestion, protocol.AskUserQuestionData{TaskID: taskID, ReqID: callID, RequestID: rid, Question: q.Question, Options: opts, AllowText: q.AllowText, Multi: q.Multi, Warnings: c.warnings, Display: c.display}}
	})
	if err != nil {
		return "", err
	}
	return h.AskUser(ctx, callID, q)
}

// ProposePlan implements tools.Interactor.
func (x interactor) ProposePlan(ctx context.Context, callID string, p tools.Plan) (tools.PlanAnswer, error) {
	h, ctx, err := x.prepare(ctx, func(taskID, rid string) Event {
		var c cardCheck
		c.prose("plan", p.Plan)
		return Event{protocol.EventPlanProposed, protocol.PlanProposedData{TaskID: taskID, ReqID: callID, RequestID: rid, Plan: p.Plan, Warnings: c.warnings, Display: c.display}}
	})
	if err != nil {
		return tools.PlanAnswer{}, err
	}
	return h.ProposePlan(ctx, callID, p)
}

// RequestDirectory implements tools.Interactor.
func (x interactor) RequestDirectory(ctx context.Context, callID string, d tools.DirRequest) (tools.DirAnswer, error) {
	h, ctx, err := x.prepare(ctx, func(taskID, rid string) Event {
		var c cardCheck
		c.prose("reason", d.Reason)
		c.text("path", d.Path)
		c.text("requestedPath", d.RequestedPath)
		c.text("link", d.Link)
		c.text("linkTarget", d.LinkTarget)
		return Event{protocol.EventDirectoryRequested, protocol.DirectoryRequestedData{TaskID: taskID, ReqID: callID, RequestID: rid, Reason: d.Reason, Path: d.Path, Writable: d.Writable,
			OutsideProject: d.OutsideProject, RequestedPath: d.RequestedPath, Link: d.Link, LinkTarget: d.LinkTarget,
			Warnings: c.warnings, Display: c.display}}
	})
	if err != nil {
		return tools.DirAnswer{}, err
	}
	return h.RequestDirectory(ctx, callID, d)
}
