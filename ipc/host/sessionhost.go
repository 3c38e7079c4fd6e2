package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/store"
)

// hostState is where a session stands in this process. It changes only in
// setStateLocked.
type hostState int

const (
	hostIdle     hostState = iota // no turn running or queued
	hostRunning                   // the runner goroutine is working through the queue
	hostAwaiting                  // a turn waits for a request.respond
)

func (s hostState) String() string {
	switch s {
	case hostIdle:
		return "idle"
	case hostRunning:
		return "running"
	case hostAwaiting:
		return "awaiting"
	}
	return fmt.Sprintf("hostState(%d)", int(s))
}

// JobKind is what a queued turn does.
type JobKind int

// The kinds of queued turns.
const (
	JobStart  JobKind = iota // a new turn with Input
	JobRetry                 // the failed turn ID again
	JobResume                // the suspended turn From, continued as ID
)

// Job is a queued turn.
type Job struct {
	Kind  JobKind
	ID    string // turn id (a resumed suspended turn keeps its own)
	From  string // for resume: the turn whose unanswered calls continue
	Input engine.Input
}

// Session is one session in this process: its subscribers, its turn
// queue and runner, its waiting requests and, once a turn needs it, its
// engine. Hosts are created on first use and live until the session is
// deleted or the server closes.
type Session struct {
	s         *Sessions
	id        string
	projectID string
	rec       *store.Recorder

	loadMu   sync.Mutex // serializes engine loading; taken before mu
	resumeMu sync.Mutex // serializes the resume-after-last-answer check

	mu      sync.Mutex // guards the fields below
	eng     *engine.Engine
	reload  bool // the engine must be rebuilt before the next turn (agent changed)
	state   hostState
	current string // id of the running turn
	// stopTurn cancels the current turn's context: turn.interrupt works
	// before the engine is loaded or has started the turn, too.
	stopTurn  context.CancelFunc
	queue     []Job
	committed int64 // last seq committed (and broadcast)
	subs      map[*Subscription]struct{}
	waiters   map[string]chan []byte // requestId → answer, for turns waiting in this process
	awaiting  int                    // number of waiters (state is awaiting while > 0)
	closed    bool
	runDone   chan struct{} // closed when the current runner exits; nil when none
	timeout   time.Duration // approval timeout; 0 = none
	grantsNew bool          // an always_* answer or a directory grant was given; save grants
	// preAnswered holds answers to requests no turn of this process waited
	// for (they were opened before a restart), by tool call id, so that the
	// resumed turn does not ask again.
	preAnswered map[string][]byte
}

// Session returns the session's host, creating it (without an engine) on
// first use. It fails with the store's ErrNotFound for an unknown session.
func (s *Sessions) Session(ctx context.Context, id string) (*Session, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: sessionId: required", ErrInvalid)
	}
	if h := s.Loaded(id); h != nil {
		return h, nil
	}
	ss, err := s.opts.Store.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	last, err := s.opts.Store.LastSeq(ctx, id)
	if err != nil {
		return nil, err
	}
	h := &Session{
		s:           s,
		id:          id,
		projectID:   ss.ProjectID,
		committed:   last,
		subs:        map[*Subscription]struct{}{},
		waiters:     map[string]chan []byte{},
		preAnswered: map[string][]byte{},
		timeout:     s.opts.ApprovalTimeout(ss),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if cur := s.sessions[id]; cur != nil {
		return cur, nil
	}
	s.sessions[id] = h
	return h, nil
}

// Loaded returns the host of a session if it exists in this process.
func (s *Sessions) Loaded(id string) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// ID is the session's id.
func (h *Session) ID() string { return h.id }

// ProjectID is the id of the session's project.
func (h *Session) ProjectID() string { return h.projectID }

func (h *Session) setStateLocked(st hostState) {
	h.state = st
}

// CurrentTurn is the id of the turn the runner works on ("" when idle).
func (h *Session) CurrentTurn() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == hostIdle {
		return ""
	}
	return h.current
}

// Running reports whether a turn runs or is queued.
func (h *Session) Running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state != hostIdle
}

// Enqueue adds a turn to the queue and starts the runner when idle. It
// reports the position in the queue (0: starts now).
func (h *Session) Enqueue(job Job) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, fmt.Errorf("%w: session %s is closing", ErrConflict, h.id)
	}
	h.queue = append(h.queue, job)
	if h.state != hostIdle {
		return len(h.queue), nil // behind the running turn and those queued before
	}
	h.setStateLocked(hostRunning)
	done := make(chan struct{})
	h.runDone = done
	h.s.wg.Go(func() {
		defer close(done)
		h.run()
	})
	return 0, nil
}

// run works through the queue, one turn at a time.
func (h *Session) run() {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 || h.closed {
			h.queue = nil
			h.current = ""
			h.setStateLocked(hostIdle)
			h.mu.Unlock()
			return
		}
		job := h.queue[0]
		h.queue = h.queue[1:]
		h.current = job.ID
		ctx, cancel := context.WithCancel(h.s.ctx)
		h.stopTurn = cancel
		h.mu.Unlock()
		h.runTurn(ctx, job)
		cancel()
		h.mu.Lock()
		h.stopTurn = nil
		h.mu.Unlock()
	}
}

// runTurn runs one turn to its end, recording each event. Turns run under
// the server's lifetime, not a connection's: ctx ends with the server or
// with turn.interrupt. The engine loads under the server's context, so
// that an interrupt before the turn started still gives the turn its
// turn_start, interrupted and turn_end events.
func (h *Session) runTurn(ctx context.Context, job Job) {
	eng, err := h.engine(h.s.ctx, true)
	if err != nil {
		h.s.log.Warn("load engine", "session", h.id, "err", err)
		h.recordFailure(job.ID, err, "engine_unavailable")
		return
	}
	var events iter.Seq[engine.Event]
	switch job.Kind {
	case JobStart:
		events = eng.Run(ctx, job.Input)
	case JobRetry:
		events = eng.RetryTurn(ctx, job.ID)
	case JobResume:
		// Calls that had started when the process died are never run again.
		started, err := h.s.opts.Store.StartedCalls(ctx, h.id, job.From)
		if err != nil {
			h.s.log.Warn("started calls", "session", h.id, "err", err)
			h.recordFailure(job.ID, err, "engine_unavailable")
			return
		}
		events = eng.ResumeTurnStarted(ctx, job.ID, started)
	}
	completed, interrupted, yielded := false, false, false
	for ev := range events {
		yielded = true
		if end, ok := ev.Data.(engine.TurnEndData); ok {
			completed = end.Status == engine.StatusCompleted
			interrupted = end.Status == engine.StatusInterrupted
		}
		if h.answeredBefore(ev) {
			// A resumed turn re-asks a request answered before the restart;
			// the bridge answers it at once, so the UI never sees it again.
			continue
		}
		h.record(eng, ev)
		if ev.Type == engine.EventToolStarted {
			// A call's start is durable before it runs (the engine starts
			// the tool only when this returns): after a crash, a started
			// call without a result is never run again unasked.
			if err := h.s.opts.Store.Flush(ctx); err != nil && ctx.Err() == nil {
				h.s.log.Warn("flush tool start", "session", h.id, "err", err)
			}
		}
		if ev.Type == engine.EventToolStarted || ev.Type == engine.EventTurnEnd {
			h.saveGrantsIfNew(eng)
		}
	}
	if !yielded && job.Kind != JobResume {
		// A retry whose error another retry already cleared: the turn id
		// was given out, so it still gets its one turn_end.
		h.recordFailure(job.ID, fmt.Errorf("%w: %w", ErrConflict, engine.ErrNothingToRetry), "nothing_to_retry")
		return
	}
	if completed && job.Kind == JobStart {
		h.maybeName(eng)
	}
	if interrupted {
		// The user stopped the turn: its calls got interrupted results, so
		// requests it left open can no longer be answered. (A turn that died
		// with the process keeps them: see turn.resume.)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := h.s.opts.Store.CloseRequests(cctx, h.id, "the turn was interrupted"); err != nil {
			h.s.log.Warn("close requests of interrupted turn", "session", h.id, "err", err)
		}
	}
}

// answeredBefore reports whether ev is an interactive event whose tool call
// was answered before a restart (see preAnswered).
func (h *Session) answeredBefore(ev engine.Event) bool {
	if !ev.Type.Interactive() {
		return false
	}
	_, callID := interactiveIDs(ev.Data)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.preAnswered[callID]
	return ok && callID != ""
}

// record hands an event to the store; it is broadcast after the commit.
func (h *Session) record(eng *engine.Engine, ev engine.Event) {
	in, err := eventInput(h.rec, ev, eng.Messages)
	if err != nil {
		h.s.log.Error("record event", "session", h.id, "type", ev.Type, "err", err)
		return
	}
	h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
}

// committedEvent runs on the store's writer goroutine after the commit.
func (h *Session) committedEvent(ev store.Event, err error) {
	if err != nil {
		h.s.log.Error("record event", "session", h.id, "err", err)
		return
	}
	h.broadcast(ev)
}

// recordFailure records an error and a turn_end for a turn that could not
// start (no engine), so that clients see it end.
func (h *Session) recordFailure(turnID string, cause error, reason string) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	errType := "engine"
	if h.s.opts.IsConfigError(cause) {
		errType = "config"
	}
	// Like the engine's own, both carry the turn's taskId.
	errData := engine.ErrorData{Error: cause.Error(), ErrorType: errType, LogTime: now}
	errData.TaskID = turnID
	endData := engine.TurnEndData{Status: engine.StatusError, ProducedFiles: []string{}, Reason: reason}
	endData.TaskID = turnID
	evs := []engine.Event{{Type: engine.EventError, Data: errData}, {Type: engine.EventTurnEnd, Data: endData}}
	for _, ev := range evs {
		in, err := eventInput(h.rec, ev, nil)
		if err != nil {
			continue
		}
		in.TurnID = turnID
		h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
	}
}

// Interrupt stops the running turn and drops the queued ones; it returns
// whether a turn was running and the ids of the dropped turns.
func (h *Session) Interrupt() (bool, []string) {
	h.mu.Lock()
	eng := h.eng
	running := h.state != hostIdle
	stop := h.stopTurn
	dropped := make([]string, 0, len(h.queue))
	for _, j := range h.queue {
		dropped = append(dropped, j.ID)
	}
	h.queue = nil
	h.mu.Unlock()
	if running {
		if eng != nil {
			eng.Interrupt() // marks the turn interrupted (not just cancelled)
		}
		if stop != nil {
			stop() // the turn has not reached the engine yet: it starts cancelled
		}
	}
	return running, dropped
}

// InterruptAll is Interrupt for shutdown and disconnects: a turn that waits
// for an answer is suspended instead when the server is closing (it stays
// resumable after a restart).
func (h *Session) InterruptAll() {
	h.mu.Lock()
	eng := h.eng
	h.queue = nil
	awaiting := h.state == hostAwaiting
	h.mu.Unlock()
	if eng == nil {
		return
	}
	if awaiting && h.s.isClosing() {
		eng.Suspend()
		return
	}
	eng.Interrupt()
}

// WaitIdle waits until the runner exits or ctx ends.
func (h *Session) WaitIdle(ctx context.Context) error {
	h.mu.Lock()
	done := h.runDone
	idle := h.state == hostIdle
	h.mu.Unlock()
	if idle || done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close releases the engine (killing its shell tasks) and ends the
// subscriptions. The runner must have exited.
func (h *Session) Close() error {
	h.mu.Lock()
	h.closed = true
	eng := h.eng
	h.eng = nil
	h.mu.Unlock()
	h.dropSubs("session closed")
	if eng == nil {
		return nil
	}
	if err := eng.Close(); err != nil {
		return fmt.Errorf("close session %s: %w", h.id, err)
	}
	return nil
}

// UnloadIfIdle closes the engine of an idle session (it is reloaded from the
// store on the next turn). It reports whether it did.
func (h *Session) UnloadIfIdle() bool {
	h.mu.Lock()
	if h.state != hostIdle || h.eng == nil {
		h.mu.Unlock()
		return false
	}
	eng := h.eng
	h.eng = nil
	h.mu.Unlock()
	if err := eng.Close(); err != nil && !errors.Is(err, engine.ErrClosed) {
		h.s.log.Warn("close engine", "session", h.id, "err", err)
	}
	return true
}

// UnloadIdle releases the idle engines of a project's sessions.
func (s *Sessions) UnloadIdle(projectID string) {
	for _, h := range s.All() {
		h.mu.Lock()
		mine := h.eng != nil && h.projectID == projectID
		h.mu.Unlock()
		if mine {
			h.UnloadIfIdle()
		}
	}
}

// Loaded returns the session's engine, nil when none is loaded.
func (h *Session) Loaded() *engine.Engine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.eng
}

// Queued is the number of turns waiting behind the running one.
func (h *Session) Queued() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.queue)
}

// MarkReload makes a loaded engine be rebuilt from the store before the
// session's next turn (never under a running one).
func (h *Session) MarkReload() {
	h.mu.Lock()
	if h.eng != nil {
		h.reload = true
	}
	h.mu.Unlock()
}

// SetApprovalTimeout changes the approval timeout of the requests asked
// from now on.
func (h *Session) SetApprovalTimeout(d time.Duration) {
	h.mu.Lock()
	h.timeout = d
	h.mu.Unlock()
}

// LockLoad holds off engine loading until UnlockLoad: the grant methods
// read and change grants with it held, so that a load never interleaves.
func (h *Session) LockLoad() { h.loadMu.Lock() }

// UnlockLoad ends LockLoad.
func (h *Session) UnlockLoad() { h.loadMu.Unlock() }

// LockResume serializes the resume-after-last-answer check (a request's
// answer, ending a suspended turn) until UnlockResume.
func (h *Session) LockResume() { h.resumeMu.Lock() }

// UnlockResume ends LockResume.
func (h *Session) UnlockResume() { h.resumeMu.Unlock() }

// RecordSessionEvent records an event that belongs to no turn.
func (h *Session) RecordSessionEvent(ev engine.Event) {
	in, err := eventInput(h.rec, ev, nil)
	if err != nil {
		return
	}
	h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
}

// Record records an event of turn turnID outside the runner (the end of a
// suspended turn); closePending closes the session's open requests in the
// event's transaction.
func (h *Session) Record(ev engine.Event, turnID string, closePending bool) error {
	in, err := eventInput(h.rec, ev, nil)
	if err != nil {
		return err
	}
	in.TurnID = turnID
	in.ClosePending = closePending
	h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
	return nil
}
