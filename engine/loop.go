package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// Run runs one turn and yields its events in order. The engine makes no
// progress while the consumer does not pull; breaking out of the loop stops
// the turn (as Interrupt does, without further events). Every turn that
// yields anything yields exactly one turn_end, after its tool goroutines
// returned. A Run while another turn runs yields an error event
// (error_type "busy") and its own turn_end, and leaves the history
// untouched. A retry with nothing to retry, and a resume with no call
// unanswered, yield nothing.
func (e *Engine) Run(ctx context.Context, tn Turn) iter.Seq[Event] {
	switch tn.Kind {
	case TurnRetry:
		return e.retry(ctx, tn.ID)
	case TurnResume:
		from := tn.From
		if from == "" {
			from = tn.ID
		}
		return e.resume(ctx, tn.ID, from)
	}
	in := tn.Input
	return e.start(ctx, tn.ID, func(t *turn) protocol.TurnStatus {
		e.stripOldAttachments()
		// Calls a turn left unanswered (it was interrupted while suspended, or
		// died with the process) get a result first: a model API refuses a
		// history with tool calls that have none.
		for _, c := range e.unansweredCalls() {
			e.appendMessage(llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name,
				Content: *errorJSON("this call did not complete: its turn was interrupted before it finished (it may not have run)", "interrupted")})
		}
		e.appendMessage(llm.Message{Role: llm.RoleUser, Content: in.Text, Attachments: in.Attachments, AttachmentRefs: in.Refs, TurnID: t.taskID})
		if !t.emit(Event{protocol.EventTurnStart, protocol.TurnStartData{TaskID: t.taskID, Input: in.Text, AttachmentCount: len(in.Attachments), Attachments: attachmentRefs(in.Refs)}}) {
			return protocol.TurnInterrupted
		}
		return t.loop()
	})
}

// retry re-runs the model after the last turn ended in a retriable error.
func (e *Engine) retry(ctx context.Context, taskID string) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		last := e.LastError()
		if last == nil || !last.Retriable {
			return
		}
		for ev := range e.start(ctx, taskID, func(t *turn) protocol.TurnStatus {
			if !t.emit(Event{protocol.EventTurnStart, protocol.TurnStartData{TaskID: t.taskID, Input: ""}}) {
				return protocol.TurnInterrupted
			}
			return t.loop()
		}) {
			if !yield(ev) {
				return
			}
		}
	}
}

// MayHaveRunResult is the result a resumed turn gives a call that had
// started when the process died: it is never run again unasked.
const MayHaveRunResult = "the sidecar stopped while this ran; it may have run partly or fully. Check its effects before you run it again"

// resume runs the calls the history's last response left unanswered, as
// turn taskID, then the loop. The calls the ledger lists as started in
// turn from are not run again: each gets MayHaveRunResult and the model
// decides. A ledger that cannot say fails the turn before any call runs.
func (e *Engine) resume(ctx context.Context, taskID, from string) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if len(e.unansweredCalls()) == 0 {
			return
		}
		for ev := range e.start(ctx, taskID, func(t *turn) protocol.TurnStatus {
			calls := e.unansweredCalls()
			if !t.emit(Event{protocol.EventTurnStart, protocol.TurnStartData{TaskID: t.taskID, Resumed: true, Input: ""}}) {
				return protocol.TurnInterrupted
			}
			t.iteration = 1
			started, err := e.ledger.Started(t.ctx, from)
			if err != nil {
				return t.failed(&engineError{typ: "storage", err: fmt.Errorf("read which calls started: %w", err)})
			}
			rest := calls[:0:0]
			for _, c := range calls {
				if slices.Contains(started, c.ID) {
					t.finish(&callState{call: c}, protocol.ToolError, "sidecar_restart", errorJSON(MayHaveRunResult, "may_have_run"))
					continue
				}
				rest = append(rest, c)
			}
			t.runTools(rest)
			if st, done := t.afterTools(); done {
				return st
			}
			return t.loop()
		}) {
			if !yield(ev) {
				return
			}
		}
	}
}

// Suspend stops the running turn without recording anything more: no
// interrupted tool results, no turn_end. A host uses it at shutdown so that
// calls waiting for approval stay resumable after a restart.
func (e *Engine) Suspend() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur != nil {
		e.cur.stopLocked(stopSuspended, nil)
	}
}

// Resumable reports whether a TurnResume would do anything: the last
// assistant message has tool calls without results.
func (e *Engine) Resumable() bool { return len(e.unansweredCalls()) > 0 }

// unansweredCalls returns the tool calls of the last assistant message that
// have no tool result after it.
func (e *Engine) unansweredCalls() []llm.ToolCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.messages) - 1; i >= 0; i-- {
		m := e.messages[i]
		if m.Role == llm.RoleAssistant {
			if len(m.ToolCalls) == 0 {
				return nil
			}
			answered := map[string]bool{}
			for _, r := range e.messages[i+1:] {
				if r.Role == llm.RoleTool {
					answered[r.ToolCallID] = true
				}
			}
			var out []llm.ToolCall
			for _, c := range m.ToolCalls {
				if !answered[c.ID] {
					out = append(out, c)
				}
			}
			return out
		}
		if m.Role == llm.RoleUser && m.Notice == "" {
			return nil
		}
	}
	return nil
}

// loop runs iterations until the model stops calling tools, the iteration
// limit, an error or an interrupt.
func (t *turn) loop() protocol.TurnStatus {
	e := t.e
	for {
		if t.iteration >= e.opts.MaxIterations {
			if e.opts.FinalizeOnMaxIterations && !t.stopped() {
				t.iteration++
				e.appendMessage(llm.Message{Role: llm.RoleUser, Notice: "max_iterations", Content: maxIterationsNotice(e.opts.Lang)})
				if _, err := t.callModel(false); err != nil {
					return t.failed(err)
				}
				t.emit(Event{protocol.EventIterationEnd, protocol.IterationEndData{TaskID: t.taskID, Iteration: t.iteration}})
			}
			return protocol.TurnMaxIterations
		}
		t.iteration++
		t.injectSteering()
		if t.stopped() {
			return t.stopStatus()
		}
		resp, err := t.callModel(true)
		if err != nil {
			return t.failed(err)
		}
		if len(resp.ToolCalls) == 0 {
			if !t.emit(Event{protocol.EventIterationEnd, protocol.IterationEndData{TaskID: t.taskID, Iteration: t.iteration}}) {
				return t.stopStatus()
			}
			if e.hasSteering() {
				continue
			}
			return protocol.TurnCompleted
		}
		t.runTools(resp.ToolCalls)
		if st, done := t.afterTools(); done {
			return st
		}
	}
}

// afterTools ends an iteration that ran tools.
func (t *turn) afterTools() (protocol.TurnStatus, bool) {
	if t.stopped() {
		return t.stopStatus(), true
	}
	if !t.emit(Event{protocol.EventIterationEnd, protocol.IterationEndData{TaskID: t.taskID, Iteration: t.iteration}}) {
		return t.stopStatus(), true
	}
	return "", false
}

// stopStatus is the status of a turn that stopped early: error (with its
// error event) when a failure stopped it, else interrupted.
func (t *turn) stopStatus() protocol.TurnStatus {
	if r, cause := t.stopState(); r == stopFailed {
		return t.reportError(cause)
	}
	return protocol.TurnInterrupted
}

// failed ends the turn with an error event, or as interrupted when the
// failure is the turn's own cancellation.
func (t *turn) failed(err error) protocol.TurnStatus {
	if t.stopped() || errors.Is(err, context.Canceled) {
		return t.stopStatus()
	}
	return t.reportError(err)
}

// reportError emits the error event that ends the turn (remembered for a
// retry) and returns the error status.
func (t *turn) reportError(err error) protocol.TurnStatus {
	kind := llm.KindOf(err)
	typ := kind.String()
	var ee *engineError
	if errors.As(err, &ee) {
		typ = ee.typ
	}
	d := protocol.EventErrorData{
		TaskID:    t.taskID,
		Error:     err.Error(),
		ErrorType: typ,
		Message:   ErrorMessage(t.e.opts.Lang, typ, err),
		Retriable: (ee == nil && llm.IsRetriable(err)) || (ee != nil && ee.retriable),
		Iteration: t.iteration,
		ReqID:     t.reqID,
		LogTime:   logTime(),
	}
	t.e.mu.Lock()
	t.e.lastErr = &d
	t.e.mu.Unlock()
	t.emit(Event{protocol.EventError, d})
	return protocol.TurnError
}

// engineError is an engine-side failure with its own error_type.
type engineError struct {
	typ       string
	err       error
	retriable bool
}

func (e *engineError) Error() string { return e.err.Error() }
func (e *engineError) Unwrap() error { return e.err }

// injectSteering moves queued steering texts into the history.
func (t *turn) injectSteering() {
	e := t.e
	e.mu.Lock()
	queued := e.steering
	e.steering = nil
	e.mu.Unlock()
	for _, s := range queued {
		e.appendMessage(llm.Message{Role: llm.RoleUser, Content: s.text, Attachments: s.atts, AttachmentRefs: s.refs, Notice: "steering"})
		t.emit(Event{protocol.EventQueueSteering, protocol.QueueSteeringData{TaskID: t.taskID, Text: s.text, Attachments: attachmentRefs(s.refs)}})
	}
}

func (e *Engine) hasSteering() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.steering) > 0
}

// appendMessage adds to the history.
func (e *Engine) appendMessage(m llm.Message) {
	e.mu.Lock()
	e.messages = append(e.messages, m)
	e.mu.Unlock()
}

// stripOldAttachments drops inline attachment bytes of earlier turns; the
// refs stay. Base64 is sent only with the turn that carries it.
func (e *Engine) stripOldAttachments() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.ContainsFunc(e.messages, func(m llm.Message) bool { return len(m.Attachments) > 0 }) {
		return
	}
	msgs := slices.Clone(e.messages) // never in place: see Messages
	for i := range msgs {
		msgs[i].Attachments = nil
	}
	e.messages = msgs
}

// response is one assembled model response.
type response struct {
	Text      string
	Reasoning string
	ToolCalls []llm.ToolCall
	Usage     *llm.Usage
}

// callModel compacts if needed, streams one model response and appends it
// to the history. A context overflow forces one compaction and one retry.
func (t *turn) callModel(withTools bool) (*response, error) {
	e := t.e
	model := e.Model()
	if model == "" {
		return nil, &engineError{typ: "config", err: fmt.Errorf("%w: set a model for the session (or OPENAI_MODEL)", llm.ErrNoModel)}
	}
	forced := false
	for {
		if err := t.compact(model, forced); err != nil {
			return nil, err
		}
		resp, err := t.stream(model, withTools)
		if err != nil && !forced && !t.stopped() && llm.IsContextOverflow(err) && e.compactor != nil {
			forced = true
			continue
		}
		if err != nil {
			return nil, err
		}
		calls := resp.ToolCalls
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = newID("call_")
			}
		}
		e.appendMessage(llm.Message{Role: llm.RoleAssistant, Content: resp.Text, Reasoning: resp.Reasoning, ToolCalls: calls})
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = c.Name
		}
		t.lastUsage = resp.Usage
		t.emit(Event{protocol.EventAssistantMessage, protocol.AssistantMessageData{TaskID: t.taskID, Text: resp.Text, Reasoning: resp.Reasoning, ToolCalls: names, Usage: usage(resp.Usage), ReqID: t.reqID, LogTime: logTime()}})
		if resp.Usage != nil {
			t.account(protocol.UsageData{ReqID: t.reqID, Model: model, Source: protocol.UsageTurn}, resp.Usage, e.fillOf(model, *resp.Usage))
		}
		return resp, nil
	}
}

// compact gives the compactor its chance before a model request.
func (t *turn) compact(model string, force bool) error {
	e := t.e
	if e.compactor == nil {
		return nil
	}
	msgs := e.Messages()
	// A summary's usage counts toward the turn and the session; the
	// context fill stays the last response's until the next one.
	onResponse := func(model, reqID string, r llm.ChatResponse) {
		t.rateLimits(reqID, model, r.RateLimits)
		t.account(protocol.UsageData{ReqID: reqID, Model: model, Source: protocol.UsageSummary}, r.Usage, nil)
	}
	out, err := e.compactor.Compact(t.ctx, CompactRequest{TaskID: t.taskID, Model: model, Messages: msgs, LastUsage: t.lastUsage, Force: force, Iteration: t.iteration, OnResponse: onResponse}, t.emit)
	if err != nil {
		if t.stopped() {
			return context.Canceled
		}
		return &engineError{typ: "compaction", err: fmt.Errorf("compaction failed: %w", err), retriable: true}
	}
	if sameHistory(out, msgs) {
		return nil
	}
	e.mu.Lock()
	// Keep anything appended meanwhile (nothing should be: the turn owns the
	// history while it runs).
	// out is clipped: appending must not write into an array that readers
	// of Messages may share.
	e.messages = append(slices.Clip(out), e.messages[len(msgs):]...)
	e.mu.Unlock()
	return nil
}

func sameHistory(a, b []llm.Message) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// stream runs one streamed request and assembles the response.
func (t *turn) stream(model string, withTools bool) (*response, error) {
	e := t.e
	t.reqID = newID("req_")
	var schemas []llm.ToolSchema
	if withTools {
		schemas = e.registry.Schemas()
	}
	msgs := e.Messages()
	if !t.emit(Event{protocol.EventLLMRequest, protocol.LLMRequestData{TaskID: t.taskID, ReqID: t.reqID, LogTime: logTime(), Model: model, MsgCount: len(msgs), ToolCount: len(schemas)}}) {
		return nil, context.Canceled
	}
	req := llm.Request{Model: model, Messages: msgs, Tools: schemas, ReasoningEffort: e.opts.ReasoningEffort, ReqID: t.reqID, Conversation: e.conv}
	var text, reasoning strings.Builder
	resp := &response{}
	finished := false
	for c, err := range e.provider.Stream(t.ctx, req) {
		if err != nil {
			if t.stopped() {
				return nil, context.Canceled
			}
			return nil, err
		}
		if c.RateLimits != nil && !t.rateLimits(t.reqID, model, c.RateLimits) {
			return nil, context.Canceled
		}
		if c.Retry != nil {
			t.emit(Event{protocol.EventLLMRetry, protocol.LLMRetryData{TaskID: t.taskID, Attempt: c.Retry.Attempt, Max: c.Retry.Max, Reason: c.Retry.Reason, WaitMS: c.Retry.WaitMS, Iteration: t.iteration, ReqID: t.reqID}})
			continue
		}
		if c.Reasoning != "" {
			reasoning.WriteString(c.Reasoning)
			if !t.emit(Event{protocol.EventReasoningDelta, protocol.DeltaData{TaskID: t.taskID, Text: c.Reasoning, ReqID: t.reqID}}) {
				return nil, context.Canceled
			}
		}
		if c.Content != "" {
			text.WriteString(c.Content)
			if !t.emit(Event{protocol.EventAssistantDelta, protocol.DeltaData{TaskID: t.taskID, Text: c.Content, ReqID: t.reqID}}) {
				return nil, context.Canceled
			}
		}
		if len(c.ToolCalls) > 0 {
			resp.ToolCalls = c.ToolCalls
			finished = true
		}
		if c.Usage != nil {
			resp.Usage = c.Usage
		}
		if c.FinishReason != "" {
			finished = true
		}
	}
	if t.stopped() {
		return nil, context.Canceled
	}
	if !finished {
		return nil, &llm.Error{Kind: llm.KindNetwork, Msg: "the model stream ended without a finish reason", Err: llm.ErrIncomplete}
	}
	resp.Text = text.String()
	resp.Reasoning = reasoning.String()
	return resp, nil
}

func maxIterationsNotice(lang string) string {
	return prompts(lang).MaxIterations
}
