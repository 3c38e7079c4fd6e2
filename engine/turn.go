package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// TurnKind is what a turn does.
type TurnKind int

// The kinds of turns.
const (
	// TurnStart is a new user turn: Turn.Input joins the history, then the
	// model runs.
	TurnStart TurnKind = iota
	// TurnRetry runs the model again after the last turn ended in a
	// retriable error (a turn of nothing when there is none).
	TurnRetry
	// TurnResume continues the tool calls the history's last response left
	// unanswered (the process died waiting for an approval, or while a call
	// ran), then the model: calls the Ledger lists as started for turn From
	// are not run again. A turn of nothing when no call is unanswered.
	TurnResume
)

func (k TurnKind) String() string {
	switch k {
	case TurnStart:
		return "start"
	case TurnRetry:
		return "retry"
	case TurnResume:
		return "resume"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Turn is one run of the engine: what it does and under which id.
type Turn struct {
	Kind TurnKind
	// ID is the turn id its events carry (taskId); generated when empty.
	ID string
	// From is, for TurnResume, the turn whose calls are continued (its
	// started calls come from the Ledger); empty means ID.
	From  string
	Input Input // TurnStart: the user's input
}

// stopReason is why a turn stops before it is done: the one record of it,
// set once by the first cause (later causes change nothing).
type stopReason int

const (
	stopNone        stopReason = iota
	stopInterrupted            // Interrupt, Close or the caller's ctx: calls get interrupted results, then interrupted + turn_end
	stopSuspended              // Suspend: nothing more is recorded (no results, no turn_end); resumable after a restart
	stopGone                   // the consumer stopped pulling: nothing more is emitted
	stopFailed                 // an error ends the turn after the current calls (no approver, the ledger failed): error + turn_end
)

// turn is the state of one running turn. It lives on the goroutine that
// drives Run's iterator; tool goroutines reach it only through toolEvents,
// and other goroutines only through stop (Interrupt, Suspend).
type turn struct {
	e      *Engine
	ctx    context.Context
	cancel context.CancelFunc
	taskID string
	yield  func(Event) bool

	// reason and cause are guarded by e.mu; set only by stopWith.
	reason stopReason
	cause  error // stopFailed: the error the turn ends with

	tools      sync.WaitGroup // the turn's tool goroutines: turn_end waits for them
	inYield    bool           // the consumer's loop body runs (a panic there is not the turn's)
	iteration  int
	produced   []string
	lastUsage  *llm.Usage
	toolEvents chan toolEvent // events emitted by tool goroutines (interactive tools)
	reqID      string         // id of the current model request
}

// stopWith records why the turn stops, unless it already stops for
// another reason, and cancels its work (a failure lets the running calls
// finish). It reports whether r is now the reason.
func (t *turn) stopWith(r stopReason, cause error) bool {
	t.e.mu.Lock()
	defer t.e.mu.Unlock()
	return t.stopLocked(r, cause)
}

func (t *turn) stopLocked(r stopReason, cause error) bool {
	if t.reason != stopNone {
		return t.reason == r
	}
	t.reason, t.cause = r, cause
	if r != stopFailed {
		t.cancel()
	}
	return true
}

// stopState returns the stop reason and, for stopFailed, its error. A
// turn whose caller's context ended is interrupted.
func (t *turn) stopState() (stopReason, error) {
	t.e.mu.Lock()
	r, cause := t.reason, t.cause
	t.e.mu.Unlock()
	if r == stopNone && t.ctx.Err() != nil {
		return stopInterrupted, nil
	}
	return r, cause
}

// toolEvent is an event a tool goroutine asks the turn to emit; ack is
// closed once the consumer has taken it.
type toolEvent struct {
	ev  Event
	ack chan bool
}

type turnKey struct{}

// callInfo is what a tool's context carries about its call.
type callInfo struct {
	t         *turn
	callID    string
	requestID string
	denyNote  string        // set by NoteDenial while the approver runs
	timeout   time.Duration // set by NoteTimeout while the approver runs
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func logTime() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// start wraps a turn body in the common prologue and epilogue: the busy
// check, the per-turn cancel, and the guarantee of exactly one turn_end,
// emitted only after every tool goroutine of the turn returned.
func (e *Engine) start(ctx context.Context, taskID string, body func(t *turn) (status protocol.TurnStatus)) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if taskID == "" {
			taskID = newID("turn_")
		}
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		t := &turn{e: e, ctx: tctx, cancel: cancel, taskID: taskID, yield: yield, toolEvents: make(chan toolEvent)}
		if err := e.begin(t); err != nil {
			typ := "busy"
			if err == ErrClosed {
				typ = "closed"
			}
			t.emit(Event{protocol.EventError, protocol.EventErrorData{TaskID: taskID, Error: err.Error(), ErrorType: typ, Message: ErrorMessage(e.opts.Lang, typ, err), LogTime: logTime()}})
			t.emit(Event{protocol.EventTurnEnd, protocol.TurnEndData{TaskID: taskID, Status: protocol.TurnError, ProducedFiles: []string{}}})
			return
		}
		defer e.end(t)
		e.meter.beginTurn(taskID)
		status := t.guarded(body)
		t.waitTools()
		switch r, _ := t.stopState(); r {
		case stopSuspended, stopGone:
			return
		}
		if status == protocol.TurnInterrupted {
			t.emit(Event{protocol.EventInterrupted, protocol.InterruptedData{TaskID: taskID, Iterations: t.iteration, ReqID: t.reqID}})
		}
		produced := t.produced
		if produced == nil {
			produced = []string{}
		}
		t.emit(Event{protocol.EventTurnEnd, protocol.TurnEndData{TaskID: taskID, Status: status, Iterations: t.iteration, ProducedFiles: produced}})
	}
}

// guarded runs the turn body behind the turn's panic boundary: a panic in
// the provider, the loop, the compactor or a tool's bookkeeping becomes an
// error event (error_type "internal"; the stack goes to the log, never to
// the wire) and the turn ends with status error. The sidecar and its other
// sessions carry on. A panic of the consumer's own loop body is passed on.
func (t *turn) guarded(body func(t *turn) protocol.TurnStatus) (status protocol.TurnStatus) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if t.inYield {
			panic(p)
		}
		slog.Error("turn panicked", "turn", t.taskID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		t.emit(Event{protocol.EventError, protocol.EventErrorData{TaskID: t.taskID, Error: "internal error: the turn crashed (details in the sidecar log)", ErrorType: "internal", Message: ErrorMessage(t.e.opts.Lang, "internal", nil), Iteration: t.iteration, ReqID: t.reqID, LogTime: logTime()}})
		status = protocol.TurnError
	}()
	return body(t)
}

// emit delivers an event to the hook and the consumer. It reports false once
// the consumer is gone (it broke out of the loop); the turn then stops.
func (t *turn) emit(ev Event) bool {
	r, _ := t.stopState()
	if r == stopSuspended {
		return false // nothing more is recorded: the turn stays resumable where it stopped
	}
	dispatch(t.e.hook, ev)
	if r == stopGone {
		return false // nobody pulls
	}
	t.inYield = true
	ok := t.yield(ev)
	t.inYield = false
	if !ok {
		t.stopWith(stopGone, nil)
		return false
	}
	return true
}

// stopped reports whether the turn must stop: for any stop reason, or
// because the caller's context ended.
func (t *turn) stopped() bool {
	r, _ := t.stopState()
	return r != stopNone
}

// emitFromTool is called by a tool goroutine; it hands the event to the turn
// goroutine and waits until the consumer has taken it.
func (t *turn) emitFromTool(ctx context.Context, ev Event) bool {
	ack := make(chan bool, 1)
	select {
	case t.toolEvents <- toolEvent{ev: ev, ack: ack}:
	case <-ctx.Done():
		return false
	}
	select {
	case ok := <-ack:
		return ok
	case <-ctx.Done():
		return false
	}
}

// pump emits tool events until done is closed or ctx ends.
func (t *turn) deliver(te toolEvent) {
	te.ack <- t.emit(te.ev)
}

// addProduced records a file a write tool produced.
func (t *turn) addProduced(p string) {
	for _, q := range t.produced {
		if q == p {
			return
		}
	}
	t.produced = append(t.produced, p)
}

// RequestID returns the requestId of the interactive event that a tool's
// context belongs to ("" outside an interactive call). Hosts implementing
// tools.Interactor use it to match their pending request.
func RequestID(ctx context.Context) string {
	if ci, ok := ctx.Value(turnKey{}).(*callInfo); ok {
		return ci.requestID
	}
	return ""
}

// NoteDenial records the user's reason for denying the approval whose
// approver got ctx; the deny result the model gets quotes it. The approver
// calls it before it returns OutcomeDeny, on the goroutine it was called
// on; with another context it does nothing.
func NoteDenial(ctx context.Context, note string) {
	if ci, ok := ctx.Value(turnKey{}).(*callInfo); ok && ci.requestID != "" {
		ci.denyNote = note
	}
}

// NoteTimeout records that the approval whose approver got ctx was denied
// because nobody answered it within d: the result the model gets says so
// (not that the user denied it). The approver calls it before it returns
// OutcomeDeny, on the goroutine it was called on; with another context or
// d <= 0 it does nothing.
func NoteTimeout(ctx context.Context, d time.Duration) {
	if ci, ok := ctx.Value(turnKey{}).(*callInfo); ok && ci.requestID != "" && d > 0 {
		ci.timeout = d
	}
}

// TaskID returns the turn id a tool's context belongs to.
func TaskID(ctx context.Context) string {
	if ci, ok := ctx.Value(turnKey{}).(*callInfo); ok {
		return ci.t.taskID
	}
	return ""
}
