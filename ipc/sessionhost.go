package ipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools/media"
)

type jobKind int

const (
	jobStart jobKind = iota
	jobRetry
	jobResume
)

// turnJob is a queued turn (kept in the store's turn queue too, until its
// turn_start).
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

	loadMu   sync.Mutex // serializes engine loading; taken before mu
	resumeMu sync.Mutex // serializes the resume-after-last-answer check

	mu      sync.Mutex // guards the fields below
	eng     *engine.Engine
	reload  bool      // the engine must be rebuilt before the next turn (agent changed)
	state   TurnState // changed only by transitionLocked
	current string    // id of the running turn
	// stopTurn cancels the current turn's context: turn.interrupt works
	// before the engine is loaded or has started the turn, too.
	stopTurn  context.CancelFunc
	queue     []turnJob
	committed int64 // last seq committed (and broadcast)
	subs      map[*subscription]struct{}
	waiters   map[string]chan []byte // requestId → answer, for turns waiting in this process
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
	state, err := ParseTurnState(ss.Status)
	if err != nil {
		s.log.Error("turn state", "session", id, "err", err)
	}
	if state.Busy() {
		// Not in this process yet: its queued turns are started by
		// resumeQueued, which moves it from queued.
		state = StateIdle
		if ss.Status == string(StateQueued) {
			state = StateQueued
		}
	}
	h := &sessionHost{
		state:       state,
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

// transitionLocked moves the session to st. An illegal move is a bug: it
// is logged and returned, never applied.
func (h *sessionHost) transitionLocked(st TurnState) error {
	if err := h.state.Next(st); err != nil {
		err = fmt.Errorf("session %s: %w", h.id, err)
		h.s.log.Error("turn state", "session", h.id, "err", err)
		return err
	}
	h.state = st
	return nil
}

// turnState returns the session's state.
func (h *sessionHost) turnState() TurnState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// currentTurn is the id of the turn the runner works on ("" when idle).
func (h *sessionHost) currentTurn() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.state.Busy() {
		return ""
	}
	return h.current
}

func (h *sessionHost) running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.Busy()
}

// enqueue persists a turn in the store's queue (with the session's move to
// queued, in one transaction) and then adds it to the runner's queue,
// starting the runner when none runs. It reports the number of turns ahead
// (0: starts now). input describes the turn for a restart (queuedInput).
func (h *sessionHost) enqueue(ctx context.Context, job turnJob) (int, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return 0, fmt.Errorf("%w: session %s is closing", ErrConflict, h.id)
	}
	status := ""
	if !h.state.Busy() {
		status = string(StateQueued)
	}
	h.mu.Unlock()
	kind := map[jobKind]string{jobStart: store.TurnStart, jobRetry: store.TurnRetry, jobResume: store.TurnResume}[job.kind]
	if _, err := h.s.opts.Store.EnqueueTurn(ctx, h.id, store.QueuedTurn{TurnID: job.id, Kind: kind, From: job.from,
		Input: queuedInput(job.input)}, status); err != nil {
		return 0, err
	}
	return h.push(job)
}

// push adds a job the store already holds to the runner's queue.
func (h *sessionHost) push(job turnJob) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, fmt.Errorf("%w: session %s is closing", ErrConflict, h.id)
	}
	h.queue = append(h.queue, job)
	if h.runDone != nil {
		return len(h.queue), nil // behind the running turn and those queued before
	}
	if h.state != StateQueued {
		if err := h.transitionLocked(StateQueued); err != nil {
			h.queue = h.queue[:len(h.queue)-1]
			return 0, fmt.Errorf("%w: %w", ErrConflict, err)
		}
	}
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
			h.runDone = nil
			settle := h.state.Busy() && !h.closed
			if settle {
				// The last job produced no turn_end (a resume with nothing to
				// resume): the session is at rest.
				_ = h.transitionLocked(StateIdle)
			}
			h.mu.Unlock()
			if settle {
				h.persistState(StateIdle)
			}
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

// persistState stores a move no event carries (the store's writer keeps
// it behind the events before it).
func (h *sessionHost) persistState(st TurnState) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.s.ctx), 5*time.Second)
	defer cancel()
	if err := h.s.opts.Store.SetStatus(ctx, h.id, string(st)); err != nil {
		h.s.log.Warn("store turn state", "session", h.id, "state", st, "err", err)
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

// record hands an event to the store, with the state it moves the
// session to; it is broadcast after the commit.
func (h *sessionHost) record(eng *engine.Engine, ev engine.Event) {
	var history func() []llm.Message
	if eng != nil {
		history = eng.Messages
	}
	in, err := durableInput(ev, history, h.stateFor(ev))
	if err != nil {
		h.s.log.Error("record event", "session", h.id, "type", ev.Type, "err", err)
		return
	}
	h.s.opts.Store.Enqueue(h.id, in, h.committedEvent)
}

// stateFor applies the move ev makes (if any) and returns the state to
// store with it ("" when none, or when the move is illegal).
func (h *sessionHost) stateFor(ev engine.Event) TurnState {
	h.mu.Lock()
	defer h.mu.Unlock()
	to, ok := stateAfter(ev, len(h.queue) > 0)
	if !ok || h.transitionLocked(to) != nil {
		return ""
	}
	return to
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
		h.record(nil, ev)
	}
}

// interrupt stops the running turn and drops the queued ones; it returns
// whether a turn was running and the ids of the dropped turns.
func (h *sessionHost) interrupt() (bool, []string) {
	h.mu.Lock()
	eng := h.eng
	running := h.state.Busy()
	stop := h.stopTurn
	dropped := make([]string, 0, len(h.queue))
	for _, j := range h.queue {
		dropped = append(dropped, j.id)
	}
	h.queue = nil
	h.mu.Unlock()
	if len(dropped) > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(h.s.ctx), 5*time.Second)
		if _, err := h.s.opts.Store.DropQueuedTurns(ctx, h.id, "", dropped...); err != nil {
			h.s.log.Warn("drop queued turns", "session", h.id, "err", err)
		}
		cancel()
	}
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
	// Queued turns stay in the store: they run after a restart.
	h.queue = nil
	awaiting := h.state == StateAwaiting
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
	idle := !h.state.Busy()
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
	if h.state.Busy() || h.eng == nil {
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

// queuedTurnInput is a queued turn's input as the store keeps it: the text
// and the refs of its saved attachments (their bytes are on disk).
type queuedTurnInput struct {
	Text string                 `json:"text,omitempty"`
	Refs []llm.StoredAttachment `json:"refs,omitempty"`
}

func queuedInput(in engine.Input) json.RawMessage {
	b, _ := json.Marshal(queuedTurnInput{Text: in.Text, Refs: in.Refs}) // plain strings: cannot fail
	return b
}

// jobOf rebuilds a stored queued turn, reading its attachments back.
func (h *sessionHost) jobOf(qt store.QueuedTurn) (turnJob, error) {
	job := turnJob{id: qt.TurnID, from: qt.From}
	switch qt.Kind {
	case store.TurnStart:
		job.kind = jobStart
	case store.TurnRetry:
		job.kind = jobRetry
	case store.TurnResume:
		job.kind = jobResume
	default:
		return turnJob{}, fmt.Errorf("queued turn %s: kind %q", qt.TurnID, qt.Kind)
	}
	var in queuedTurnInput
	if err := json.Unmarshal(qt.Input, &in); err != nil {
		return turnJob{}, fmt.Errorf("queued turn %s: %w", qt.TurnID, err)
	}
	job.input = engine.Input{Text: in.Text, TaskID: qt.TurnID, Refs: in.Refs}
	for _, r := range in.Refs {
		name, mime, data, err := media.ReadStoredAttachment(h.s.opts.Store.SessionDir(h.id), r.Path)
		if err != nil {
			return turnJob{}, fmt.Errorf("queued turn %s: %w", qt.TurnID, err)
		}
		job.input.Attachments = append(job.input.Attachments, llm.Attachment{Name: name, MimeType: mime, DataURL: media.EncodeDataURL(mime, data)})
	}
	return job, nil
}

// resumeQueued starts the turns a previous process acknowledged and did not
// start (the store's turn queue), in order. The server calls it once, at
// start, after RecoverInterrupted.
func (s *Server) resumeQueued(ctx context.Context) error {
	ids, err := s.opts.Store.SessionsWithQueuedTurns(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		h, err := s.host(ctx, id)
		if err != nil {
			return err
		}
		qts, err := s.opts.Store.QueuedTurns(ctx, id)
		if err != nil {
			return err
		}
		for _, qt := range qts {
			job, err := h.jobOf(qt)
			if err != nil {
				// It can never run: it ends now, with its one turn_end.
				s.log.Warn("queued turn", "session", id, "err", err)
				h.recordFailure(qt.TurnID, err, "queued_turn_unreadable")
				continue
			}
			if _, err := h.push(job); err != nil {
				return err
			}
		}
	}
	return nil
}
