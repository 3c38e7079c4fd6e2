package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// toolGrace is how long an interrupted turn waits for a tool before it logs
// that the tool ignores its context (the turn still waits for it: every
// tool goroutine returns before turn_end).
const toolGrace = 2 * time.Second

// callState is one tool call of a model response.
type callState struct {
	call     llm.ToolCall
	spec     tools.Spec
	known    bool
	enabled  bool            // known and offered (tools.Spec.Enabled); a call to a disabled tool never runs
	args     map[string]any  // decoded once, strictly (tools.NormalizeArgs): the decision and the events use it
	canon    json.RawMessage // args' canonical encoding: what the handler gets
	argErr   error           // why the arguments were refused; such a call gets no decision and never runs
	decision permission.Decision
	target   tools.Target // what the call is decided, carded, granted and run as: the called tool, or the one a dispatcher's call names
	// userApproved: the user answered this call's permission request with
	// an allowing outcome (tools.WithUserApproved).
	userApproved bool

	started     time.Time
	output      string // what the model sees
	status      protocol.ToolStatus
	reason      string
	attachments []llm.Attachment
}

type callResult struct {
	st  *callState
	out any
	err error
}

// runTools runs the calls of one response: first the low-risk ones that need
// nobody's approval, in parallel; then the rest in order. Each call's result
// joins the history as soon as it finishes.
func (t *turn) runTools(calls []llm.ToolCall) {
	e := t.e
	states := make([]*callState, len(calls))
	for i, c := range calls {
		st := &callState{call: c}
		st.spec, st.known = e.registry.Lookup(c.Name)
		st.enabled = st.known && st.spec.Enabled() // decided once: the call runs, or is refused, by this
		if st.enabled {
			a, err := st.spec.NormalizeArgs(json.RawMessage(c.Arguments))
			st.args, st.canon, st.argErr = a.Map, a.Canonical, err
			if err == nil {
				st.target, st.argErr = tools.TargetOf(st.spec, a)
			}
			if st.argErr == nil {
				st.decision = e.permissions.Evaluate(st.target.Spec.GrantName(), st.target.Args.Map, st.target.Spec.Meta)
			}
		}
		if st.args == nil {
			st.args = map[string]any{"_raw": c.Arguments} // for the event only; the call never runs
		}
		states[i] = st
		t.emit(Event{protocol.EventToolProposed, protocol.ToolProposedData{TaskID: t.taskID, ReqID: c.ID, Name: c.Name, Arguments: st.args}})
	}
	var parallel, serial []*callState
	for _, st := range states {
		if st.enabled && st.argErr == nil && st.target.Spec.Meta.Parallel() && st.decision.Allowed && !st.decision.NeedsUser {
			parallel = append(parallel, st)
		} else {
			serial = append(serial, st)
		}
	}
	t.runParallel(parallel)
	for _, st := range serial {
		if t.stopped() {
			t.finish(st, protocol.ToolInterrupted, "", nil)
			continue
		}
		t.runSerial(st)
	}
	t.attachMedia(states)
}

// runParallel starts every call at once and finishes them as they end.
func (t *turn) runParallel(states []*callState) {
	if len(states) == 0 {
		return
	}
	results := make(chan callResult, len(states))
	n := 0
	for _, st := range states {
		if t.startCall(st, results) {
			n++
		}
	}
	t.collect(results, n)
}

// runSerial asks for permission when needed, then runs one call.
func (t *turn) runSerial(st *callState) {
	if !st.known {
		t.finishError(st, tools.Errorf("unknown_tool", "unknown tool %q; use one of the listed tools", st.call.Name))
		return
	}
	if !st.enabled {
		t.finishError(st, tools.Errorf("tool_disabled", "tool %q is disabled here; use one of the listed tools", st.call.Name))
		return
	}
	if st.argErr != nil {
		t.finishError(st, st.argErr)
		return
	}
	d := st.decision
	if !d.Allowed && !d.NeedsUser {
		t.finish(st, protocol.ToolDenied, d.Reason, errorJSON("permission denied: "+d.Reason, "permission_denied"))
		return
	}
	if d.NeedsUser {
		outcome, why, err := t.approve(st)
		if t.stopped() {
			t.finish(st, protocol.ToolInterrupted, "", nil)
			return
		}
		if err != nil {
			t.stopWith(stopFailed, &engineError{typ: "approval", err: err})
			t.finish(st, protocol.ToolError, err.Error(), errorJSON(err.Error(), "approval_error"))
			return
		}
		if outcome == permission.OutcomeDeny {
			if why.timeout > 0 {
				// Nobody answered: the model must not read it as the
				// user's refusal (it could ask again later).
				msg := fmt.Sprintf("no answer came within the session's approval timeout of %s, so this tool call was not run (the user did not deny it)", why.timeout)
				t.finish(st, protocol.ToolDenied, "no answer within the approval timeout", errorJSON(msg, "approval_timeout"))
				return
			}
			msg := "the user denied this tool call"
			if why.note != "" {
				msg += ", with this note: " + why.note
			}
			t.finish(st, protocol.ToolDenied, "denied by the user", errorJSON(msg, "denied"))
			return
		}
	}
	results := make(chan callResult, 1)
	if t.startCall(st, results) {
		t.collect(results, 1)
	}
}

// denial is why an approval was denied: the user's note (NoteDenial), or
// the approval timeout that passed with no answer (NoteTimeout).
type denial struct {
	note    string
	timeout time.Duration
}

// approve emits permission_required and waits for the approver; why says
// why a deny was given.
func (t *turn) approve(st *callState) (outcome permission.Outcome, why denial, err error) {
	e := t.e
	requestID := newID("perm_")
	tg := st.target // the card shows, and a grant covers, the real tool
	cmd, whyNot := "", "not a shell command"
	if tg.Spec.Meta.Class == tools.ClassExec {
		if s, ok := tg.Args.Map["command"].(string); ok {
			cmd, whyNot = permission.CommandGrant(s)
		}
	}
	meta := tg.Spec.Meta
	req := permission.Request{ToolName: tg.Spec.GrantName(), Arguments: tg.Args.Map, Metadata: &meta, Reason: st.decision.Reason, ToolCallID: st.call.ID, RequestID: requestID, Command: cmd}
	var c cardCheck
	c.text("name", tg.Spec.Name)
	c.value("arguments", tg.Args.Map)
	c.prose("reason", st.decision.Reason)
	c.text("command", cmd)
	diff := t.cardDiff(tg)
	c.diff(diff)
	if !t.emit(Event{protocol.EventPermissionRequired, protocol.PermissionRequiredData{TaskID: t.taskID, ReqID: st.call.ID, RequestID: requestID, Name: tg.Spec.Name, Arguments: tg.Args.Map, Reason: st.decision.Reason, Category: meta.Category, RiskLevel: string(meta.RiskLevel), Command: cmd, AlwaysCommand: cmd != "", AlwaysCommandNote: whyNot, ToolGrant: tg.Spec.GrantName(), Via: tg.Via, Diff: diff, Warnings: c.warnings, Display: c.display}}) {
		return permission.OutcomeDeny, denial{}, context.Canceled
	}
	e.mu.Lock()
	approver := e.approver
	e.mu.Unlock()
	byUser := approver != nil
	if approver == nil {
		approver = permission.Fallback(e.opts.DefaultApproval)
	}
	ci := &callInfo{t: t, callID: st.call.ID, requestID: requestID}
	outcome, err = approver(context.WithValue(t.ctx, turnKey{}, ci), req)
	if err != nil {
		return permission.OutcomeDeny, denial{}, err
	}
	if outcome != permission.OutcomeDeny {
		e.permissions.Record(req, outcome)
		st.userApproved = byUser
		return outcome, denial{}, nil
	}
	return outcome, denial{note: ci.denyNote, timeout: ci.timeout}, nil
}

// startCall emits the call's tool_started, makes its start durable in the
// ledger and then runs the tool in a goroutine the turn owns; the result
// goes to results. It reports whether the tool runs. When the ledger
// cannot record the start, the tool never runs: the call gets an error
// result and the turn fails after the calls already running (fail closed:
// a start that is not durable could run again after a crash).
func (t *turn) startCall(st *callState, results chan<- callResult) bool {
	st.started = time.Now()
	t.emit(Event{protocol.EventToolStarted, protocol.ToolStartedData{TaskID: t.taskID, ReqID: st.call.ID, Name: st.call.Name, StartTime: st.started.UnixMilli()}})
	if t.stopped() {
		t.finish(st, protocol.ToolInterrupted, "", nil)
		return false
	}
	if err := t.e.ledger.Begin(t.ctx, t.taskID, st.call.ID); err != nil {
		if t.stopped() {
			t.finish(st, protocol.ToolInterrupted, "", nil)
			return false
		}
		err = &engineError{typ: "storage", err: fmt.Errorf("record the start of tool call %s: %w", st.call.ID, err)}
		t.stopWith(stopFailed, err)
		t.finish(st, protocol.ToolError, "not_recorded", errorJSON("the sidecar could not record that this call started, so it did not run it: "+err.Error(), "not_recorded"))
		return false
	}
	ctx := context.WithValue(t.ctx, turnKey{}, &callInfo{t: t, callID: st.call.ID})
	ctx = tools.WithElicitor(ctx, interactor{t.e}) // an MCP server's elicitation during the call (elicit.go)
	if st.userApproved {
		ctx = tools.WithUserApproved(ctx)
	}
	call := tools.Call{ID: st.call.ID, Name: st.target.Spec.Name, Args: st.target.Args.Canonical}
	handler := st.target.Spec.Handler
	t.tools.Go(func() {
		var r callResult
		r.st = st
		defer func() {
			if p := recover(); p != nil {
				slog.Error("tool panicked", "tool", call.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				r.out, r.err = nil, tools.Errorf("panic", "the tool crashed: %v", p)
			}
			results <- r
		}()
		r.out, r.err = handler(ctx, call)
	})
	return true
}

// collect waits for n results, forwarding events tools emit meanwhile.
// After an interrupt it goes on waiting (every tool goroutine returns
// before the turn ends) and logs a tool that ignores its context for
// longer than toolGrace.
func (t *turn) collect(results <-chan callResult, n int) {
	var grace <-chan time.Time
	done := t.ctx.Done()
	for n > 0 {
		select {
		case te := <-t.toolEvents:
			t.deliver(te)
		case r := <-results:
			n--
			t.finishResult(r)
		case <-done:
			done = nil
			timer := time.NewTimer(toolGrace)
			defer timer.Stop()
			grace = timer.C
		case <-grace:
			grace = nil
			slog.Warn("a tool goes on after its turn was stopped; the turn waits for it", "turn", t.taskID, "running", n)
		}
	}
}

// waitTools waits for every tool goroutine of the turn (each has sent its
// result by then), answering tool events meanwhile so none blocks.
func (t *turn) waitTools() {
	done := make(chan struct{})
	go func() {
		t.tools.Wait()
		close(done)
	}()
	for {
		select {
		case te := <-t.toolEvents:
			te.ack <- false
		case <-done:
			return
		}
	}
}

// finishResult turns a handler's return into the call's result.
func (t *turn) finishResult(r callResult) {
	st := r.st
	if r.err != nil {
		if t.stopped() && errors.Is(r.err, context.Canceled) || t.stopped() && t.ctx.Err() != nil {
			t.finish(st, protocol.ToolInterrupted, "", errorJSON("interrupted by the user", "interrupted"))
			return
		}
		t.finishError(st, r.err)
		return
	}
	out := r.out
	if res, ok := out.(tools.Result); ok {
		st.attachments = res.Attachments
		out = res.Output
	} else if res, ok := out.(*tools.Result); ok && res != nil {
		st.attachments = res.Attachments
		out = res.Output
	}
	text, err := resultText(out)
	if err != nil {
		t.finishError(st, err)
		return
	}
	if fp, ok := out.(tools.FileProducer); ok {
		for _, p := range fp.ProducedFiles() {
			t.addProduced(p)
		}
	} else if st.target.Spec.Meta.Class == tools.ClassWrite {
		for _, name := range append([]string{"path", "file_path"}, st.target.Spec.Meta.PathArgs...) {
			if p, ok := st.target.Args.Map[name].(string); ok && p != "" {
				if ws := t.e.permissions.Workspace(); ws != nil {
					p = ws.Rel(p) // the patch tools' form: workspace-relative, '/'
				}
				t.addProduced(p)
			}
		}
	}
	t.finish(st, protocol.ToolOK, "", t.budget(st, text))
}

func (t *turn) finishError(st *callState, err error) {
	t.finish(st, protocol.ToolError, err.Error(), errorJSON(err.Error(), tools.ErrorType(err)))
}

// finish records a call's result in the history and emits tool_finished.
// A call is finished once; later calls are ignored.
func (t *turn) finish(st *callState, status protocol.ToolStatus, reason string, output *string) {
	if st.status != "" {
		return
	}
	st.status, st.reason = status, reason
	if output == nil {
		output = errorJSON("interrupted by the user before it ran", "interrupted")
	}
	st.output = *output
	if r, _ := t.stopState(); r == stopSuspended {
		return // a suspended turn leaves its calls unanswered: a resume runs them
	}
	t.e.appendMessage(llm.Message{Role: llm.RoleTool, ToolCallID: st.call.ID, Name: st.call.Name, Content: st.output})
	var dur int64
	if !st.started.IsZero() {
		dur = time.Since(st.started).Milliseconds()
	}
	t.emit(Event{protocol.EventToolFinished, protocol.ToolFinishedData{TaskID: t.taskID, ReqID: st.call.ID, Name: st.call.Name, Status: status, Reason: reason, Duration: dur, ResultPreview: preview(st.output, 500)}})
}

// attachMedia finishes abandoned calls and adds the media tools returned as
// a user message after the tool results.
func (t *turn) attachMedia(states []*callState) {
	var atts []llm.Attachment
	var names []string
	for _, st := range states {
		if st.status == "" {
			t.finish(st, protocol.ToolInterrupted, "", nil)
		}
		atts = append(atts, st.attachments...)
		for _, a := range st.attachments {
			names = append(names, a.Name)
		}
	}
	if len(atts) > 0 {
		t.e.appendMessage(llm.Message{Role: llm.RoleUser, Notice: "media", Attachments: atts, Content: "Attached media from tool results: " + strings.Join(names, ", ")})
	}
}

// budget spills a result over the save threshold to the tool-result
// directory and gives the model a preview plus the path; without a
// directory it truncates.
func (t *turn) budget(st *callState, text string) *string {
	o := t.e.opts
	if len(text) <= o.ResultSaveThreshold && len(text) <= o.ResultMaxChars {
		return &text
	}
	head := min(o.ResultMaxChars/2, 4000)
	tail := min(o.ResultMaxChars/4, 2000)
	if head+tail >= len(text) {
		return &text
	}
	note := ""
	if o.ToolResultDir != "" {
		path := filepath.Join(o.ToolResultDir, sanitizeFile(t.taskID+"-"+st.call.ID)+".txt")
		err := os.MkdirAll(o.ToolResultDir, 0o700)
		if err == nil {
			err = os.WriteFile(path, []byte(text), 0o600)
		}
		if err == nil {
			note = fmt.Sprintf("[result of %d chars saved to %s; read it with read_file using start_line/end_line]", len(text), path)
		} else {
			slog.Warn("tool result spill failed", "err", err)
		}
	}
	if note == "" {
		note = fmt.Sprintf("[result truncated: %d chars in all]", len(text))
	}
	out := text[:cutUTF8(text, head)] + "\n…\n" + text[len(text)-tailUTF8(text, tail):] + "\n" + note
	return &out
}

func sanitizeFile(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == 0 {
			return '_'
		}
		return r
	}, s)
}

// cutUTF8 returns n moved back to a rune boundary.
func cutUTF8(s string, n int) int {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

func tailUTF8(s string, n int) int {
	i := len(s) - n
	for i < len(s) && i > 0 && s[i]&0xC0 == 0x80 {
		i++
	}
	return len(s) - i
}

func resultText(out any) (string, error) {
	switch v := out.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case json.RawMessage:
		return string(v), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", tools.Errorf("bad_result", "tool result is not serialisable: %v", err)
	}
	return string(b), nil
}

func errorJSON(msg, typ string) *string {
	b, _ := json.Marshal(map[string]string{"error": msg, "error_type": typ})
	s := string(b)
	return &s
}

func preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cutUTF8(s, n)] + "…"
}
