package ipc

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

type jobKind int

const (
	jobStart jobKind = iota
	jobRetry
	jobResume
)

// turnJob is a queued turn.
type turnJob struct {
	kind  jobKind
	id    string // turn id (a resumed suspended turn keeps its own)
	from  string // for resume: the turn whose unanswered calls continue
	input engine.Input
}

// sessionHost is one session in this process: its subscribers, its turn
// queue and runner, its waiting requests and, once a turn needs it, its
// engine. Hosts are created on first use and live until the session is
// deleted or the server closes.
type sessionHost struct {
	s         *Server
	id        string
	projectID string
	rec       *store.Recorder
	deltas    deltaCoalescer // merges a stream's deltas (has its own lock)

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
	queue     []turnJob
	committed int64 // last seq committed (and broadcast)
	subs      map[*subscription]struct{}
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

// host returns the session's host, creating it (without an engine) on first
// use. It fails with ErrNotFound for an unknown session.
func (s *Server) host(ctx context.Context, id string) (*sessionHost, error) {
	if id == "" {
		return nil, invalidField("sessionId", "required")
	}
	if h := s.loadedHost(id); h != nil {
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
	set := sessionSettings(ss)
	h := &sessionHost{
		s:           s,
		id:          id,
		projectID:   ss.ProjectID,
		committed:   last,
		subs:        map[*subscription]struct{}{},
		waiters:     map[string]chan []byte{},
		preAnswered: map[string][]byte{},
		timeout:     time.Duration(set.ApprovalTimeoutMS) * time.Millisecond,
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

// loadedHost returns the host of a session if it exists in this process.
func (s *Server) loadedHost(id string) *sessionHost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (h *sessionHost) setStateLocked(st hostState) {
	h.state = st
}

// currentTurn is the id of the turn the runner works on ("" when idle).
func (h *sessionHost) currentTurn() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == hostIdle {
		return ""
	}
	return h.current
}

func (h *sessionHost) running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state != hostIdle
}

// enqueue adds a turn to the queue and starts the runner when idle. It
// reports the position in the queue (0: starts now).
func (h *sessionHost) enqueue(job turnJob) (int, error) {
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
func (h *sessionHost) run() {
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
		h.current = job.id
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
func (h *sessionHost) runTurn(ctx context.Context, job turnJob) {
	eng, err := h.engine(h.s.ctx, true)
	if err != nil {
		h.s.log.Warn("load engine", "session", h.id, "err", err)
		h.recordFailure(job.id, err, "engine_unavailable")
		return
	}
	var events iter.Seq[engine.Event]
	switch job.kind {
	case jobStart:
		events = eng.Run(ctx, job.input)
	case jobRetry:
		events = eng.RetryTurn(ctx, job.id)
	case jobResume:
		// Calls that had started when the process died are never run again.
		started, err := h.s.opts.Store.StartedCalls(ctx, h.id, job.from)
		if err != nil {
			h.s.log.Warn("started calls", "session", h.id, "err", err)
			h.recordFailure(job.id, err, "engine_unavailable")
			return
		}
		events = eng.ResumeTurnStarted(ctx, job.id, started)
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
	if !yielded && job.kind != jobResume {
		// A retry whose error another retry already cleared: the turn id
		// was given out, so it still gets its one turn_end.
		h.recordFailure(job.id, fmt.Errorf("%w: %w", ErrConflict, engine.ErrNothingToRetry), "nothing_to_retry")
		return
	}
	if completed && job.kind == jobStart {
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
func (h *sessionHost) answeredBefore(ev engine.Event) bool {
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
func (h *sessionHost) record(eng *engine.Engine, ev engine.Event) {
	if h.deltas.add(h.rec, ev, func(seal func() store.EventInput) { h.s.opts.Store.EnqueueSealed(h.id, seal, h.committedEvent) }) {
		return
	}
	h.deltas.cut()
	in, err := eventInput(h.rec, ev, eng.Messages)
	if err != nil {
		h.s.log.Error("record event", "session", h.id, "type", ev.Type, "err", err)
		return
	}
	h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
}

// committedEvent runs on the store's writer goroutine after the commit.
func (h *sessionHost) committedEvent(ev store.Event, err error) {
	if err != nil {
		h.s.log.Error("record event", "session", h.id, "err", err)
		return
	}
	h.broadcast(ev)
}

// recordFailure records an error and a turn_end for a turn that could not
// start (no engine), so that clients see it end.
func (h *sessionHost) recordFailure(turnID string, cause error, reason string) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	we := wireError(cause)
	errType := "engine"
	if we.Code == CodeConfig {
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
		h.deltas.cut()
		h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
	}
}

// interrupt stops the running turn and drops the queued ones; it returns
// whether a turn was running and the ids of the dropped turns.
func (h *sessionHost) interrupt() (bool, []string) {
	h.mu.Lock()
	eng := h.eng
	running := h.state != hostIdle
	stop := h.stopTurn
	dropped := make([]string, 0, len(h.queue))
	for _, j := range h.queue {
		dropped = append(dropped, j.id)
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

// interruptAll is interrupt for shutdown and disconnects: a turn that waits
// for an answer is suspended instead (it stays resumable after a restart).
func (h *sessionHost) interruptAll() {
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

// waitIdle waits until the runner exits or ctx ends.
func (h *sessionHost) waitIdle(ctx context.Context) error {
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

// close releases the engine (killing its shell tasks) and ends the
// subscriptions. The runner must have exited.
func (h *sessionHost) close() error {
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

// unloadIfIdle closes the engine of an idle session (it is reloaded from the
// store on the next turn). It reports whether it did.
func (h *sessionHost) unloadIfIdle() bool {
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

// unloadIdle releases the idle engines of a project's sessions.
func (s *Server) unloadIdle(projectID string) {
	s.mu.Lock()
	hosts := make([]*sessionHost, 0, len(s.sessions))
	for _, h := range s.sessions {
		hosts = append(hosts, h)
	}
	s.mu.Unlock()
	for _, h := range hosts {
		h.mu.Lock()
		mine := h.eng != nil && h.projectID == projectID
		h.mu.Unlock()
		if mine {
			h.unloadIfIdle()
		}
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
