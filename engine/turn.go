package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// turn is the state of one running turn. It lives on the goroutine that
// drives Run's iterator; tool goroutines reach it only through toolEvents.
type turn struct {
	e      *Engine
	ctx    context.Context
	cancel context.CancelFunc
	taskID string
	yield  func(Event) bool

	gone       bool // the consumer stopped pulling; no yield after that
	inYield    bool // the consumer's loop body runs (a panic there is not the turn's)
	suspended  bool // Suspend was called: end without touching history
	iteration  int
	produced   []string
	lastUsage  *llm.Usage
	toolEvents chan toolEvent // events emitted by tool goroutines (interactive tools)
	reqID      string         // id of the current model request
	fatal      error          // an error that ends the turn after the current tools (no approver)
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
}

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func logTime() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// start wraps a turn body in the common prologue and epilogue: the busy
// check, the per-turn cancel, and the guarantee of exactly one turn_end.
func (e *Engine) start(ctx context.Context, taskID string, body func(t *turn) (status string)) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if taskID == "" {
			taskID = newID("turn_")
		}
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		t := &turn{e: e, ctx: tctx, cancel: cancel, taskID: taskID, yield: yield, toolEvents: make(chan toolEvent)}
		if err := e.begin(cancel); err != nil {
			typ := "busy"
			if err == ErrClosed {
				typ = "closed"
			}
			t.emit(Event{EventError, ErrorData{task: task{taskID}, Error: err.Error(), ErrorType: typ, LogTime: logTime()}})
			t.emit(Event{EventTurnEnd, TurnEndData{task: task{taskID}, Status: StatusError, ProducedFiles: []string{}}})
			return
		}
		defer e.end()
		status := t.guarded(body)
		if t.suspended {
			return
		}
		if status == StatusInterrupted {
			t.emit(Event{EventInterrupted, InterruptedData{task: task{taskID}, Iterations: t.iteration, ReqID: t.reqID}})
		}
		produced := t.produced
		if produced == nil {
			produced = []string{}
		}
		t.emit(Event{EventTurnEnd, TurnEndData{task: task{taskID}, Status: status, Iterations: t.iteration, ProducedFiles: produced}})
	}
}

// guarded runs the turn body behind the turn's panic boundary: a panic in
// the provider, the loop, the compactor or a tool's bookkeeping becomes an
// error event (error_type "internal"; the stack goes to the log, never to
// the wire) and the turn ends with status error. The sidecar and its other
// sessions carry on. A panic of the consumer's own loop body is passed on.
func (t *turn) guarded(body func(t *turn) string) (status string) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if t.inYield {
			panic(p)
		}
		slog.Error("turn panicked", "turn", t.taskID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		t.emit(Event{EventError, ErrorData{task: task{t.taskID}, Error: "internal error: the turn crashed (details in the sidecar log)", ErrorType: "internal", Iteration: t.iteration, ReqID: t.reqID, LogTime: logTime()}})
		status = StatusError
	}()
	return body(t)
}

// emit delivers an event to the hook and the consumer. It reports false once
// the consumer is gone (it broke out of the loop); the turn then stops.
func (t *turn) emit(ev Event) bool {
	dispatch(t.e.hook, ev)
	if t.gone {
		return false
	}
	t.inYield = true
	ok := t.yield(ev)
	t.inYield = false
	if !ok {
		t.gone = true
		t.cancel()
		return false
	}
	return true
}

// stopped reports whether the turn must stop: interrupted, consumer gone,
// caller's context done or suspended.
func (t *turn) stopped() bool { return t.gone || t.suspended || t.ctx.Err() != nil }

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
// interact.Handlers use it to match their pending request.
func RequestID(ctx context.Context) string {
	if ci, ok := ctx.Value(turnKey{}).(*callInfo); ok {
		return ci.requestID
	}
	return ""
}

// TaskID returns the turn id a tool's context belongs to.
func TaskID(ctx context.Context) string {
	if ci, ok := ctx.Value(turnKey{}).(*callInfo); ok {
		return ci.t.taskID
	}
	return ""
}
