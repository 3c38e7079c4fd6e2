package backend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools/media"
)

// JobKind is what a queued turn does.
type JobKind int

// The kinds of queued turns.
const (
	JobStart  JobKind = iota // a new turn with Input
	JobRetry                 // the failed turn ID again
	JobResume                // the suspended turn From, continued as ID
)

// Job is a queued turn (kept in the store's turn queue too, until its
// turn_start).
type Job struct {
	Kind  JobKind
	ID    string // turn id (a resumed suspended turn keeps its own)
	From  string // for resume: the turn whose unanswered calls continue
	Input engine.Input
	// Queued is when the turn was acknowledged (queue.list's createdAt).
	Queued time.Time
}

// Session is one session in this process: its subscribers, its turn
// queue and runner, its waiting requests and, once a turn needs it, its
// engine. Hosts are created on first use and live until the session is
// deleted or the server closes.
type Session struct {
	s         *Sessions
	id        string
	projectID string
	deltas    deltaCoalescer // merges a stream's deltas (has its own lock)
	titled    atomic.Bool    // the session has a title: maybeName has nothing to do

	loadMu   sync.Mutex // serializes engine loading; taken before mu
	resumeMu sync.Mutex // serializes the resume-after-last-answer check

	// mu guards the fields below it. The turn state and its durable copy
	// change together under it (moveLocked): the store's writer queue gets
	// the moves in the order they are made. Lock order: mu, then subMu; the
	// store's writer never takes mu (its callbacks take subMu only).
	mu      sync.Mutex
	eng     *engine.Engine
	reload  bool      // the engine must be rebuilt before the next turn (agent changed)
	state   TurnState // changed only by moveLocked
	current string    // id of the running turn, from the moment the runner takes it
	// stopTurn cancels the current turn's context: turn.interrupt works
	// before the engine is loaded or has started the turn, too.
	stopTurn context.CancelFunc
	// handoff is the current turn when push made it so while the runner
	// was between a turn_end and its next look at the queue.
	handoff   *takenTurn
	queue     []Job
	waiters   map[string]chan []byte // requestId → answer, for turns waiting in this process
	closed    bool
	rewinding bool          // a session.rewind runs: Enqueue refuses (rewind.go)
	enqueuing int           // Enqueue calls past their rewind check, not yet pushed (rewind.go)
	runDone   chan struct{} // closed when the current runner exits; nil when none
	timeout   time.Duration // approval timeout; 0 = none
	grantsNew bool          // an always_* answer or a directory grant was given; save grants
	// preAnswered holds answers to requests no turn of this process waited
	// for (they were opened before a restart), by tool call id, so that the
	// resumed turn does not ask again.
	preAnswered map[string][]byte

	subMu     sync.Mutex // guards committed, subs, presence and joins; taken after mu, never before
	committed int64      // last seq committed (and broadcast)
	subs      map[*Subscription]struct{}
	presence  []protocol.PresenceClient // last list sent (session.presence)
	joins     int64                     // counts subscriptions, for their join order
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
	state, err := ParseTurnState(ss.Status)
	if err != nil {
		s.log.Error("turn state", "session", id, "err", err)
	}
	if state == StateRunning || state == StateAwaiting {
		// Stored busy but not in this process: RecoverInterrupted settles
		// such turns at start; until then the session is at rest here.
		state = StateIdle
	}
	h := &Session{
		state:       state,
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

// transitionLocked checks and applies a move of the in-memory state only.
// An illegal move is a bug: it is logged and returned, never applied.
// Everything but moveLocked goes through moveLocked.
func (h *Session) transitionLocked(st TurnState) error {
	if err := h.state.Next(st); err != nil {
		err = fmt.Errorf("session %s: %w", h.id, err)
		h.s.log.Error("turn state", "session", h.id, "err", err)
		return err
	}
	h.state = st
	return nil
}

// moveLocked is the one place the session's turn state changes: it moves
// the state to st and queues its durable copy (sessions.status) on the
// store's writer while h.mu is held, so the store sees the moves in the
// order they were made. When ev is not nil the state is stored with that
// event, in its transaction; otherwise alone. It returns the move's error
// (an illegal move changes nothing and is not stored).
func (h *Session) moveLocked(st TurnState, ev *store.EventInput) error {
	if err := h.transitionLocked(st); err != nil {
		return err
	}
	if ev != nil {
		ev.Status = string(st)
		return nil // the caller enqueues ev, still under h.mu
	}
	h.s.opts.Store.EnqueueStatus(h.id, string(st), func(err error) {
		if err != nil {
			h.s.log.Warn("store turn state", "session", h.id, "state", st, "err", err)
		}
	})
	return nil
}

// State is where the session's turns stand.
func (h *Session) turnState() TurnState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// CurrentTurn is the id of the turn the runner works on ("" when idle).
func (h *Session) CurrentTurn() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.state.Busy() {
		return ""
	}
	return h.current
}

// Running reports whether a turn runs, waits or is queued.
func (h *Session) Running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.Busy()
}

// Enqueue stores a turn in the session's durable queue (with the move to
// queued, in one transaction) and then adds it to the runner's queue,
// starting the runner when none runs: once Enqueue returns, the turn
// survives any exit. It reports the number of turns ahead (0: starts now).
func (h *Session) Enqueue(ctx context.Context, job Job) (int, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return 0, fmt.Errorf("%w: session %s is closing", ErrConflict, h.id)
	}
	if err := h.enterEnqueue(); err != nil {
		return 0, err
	}
	defer h.leaveEnqueue()
	// The queue row first; the move to queued (push) is stored behind it.
	if job.Queued.IsZero() {
		job.Queued = time.Now().UTC().Truncate(time.Millisecond) // the store keeps milliseconds
	}
	qt := store.QueuedTurn{TurnID: job.ID, Kind: job.Kind.storeKind(), From: job.From, Input: queuedInput(job.Input), CreatedAt: job.Queued}
	if _, err := h.s.opts.Store.EnqueueTurn(ctx, h.id, qt, ""); err != nil {
		return 0, err
	}
	return h.push(job)
}

// push adds a job the store already holds to the runner's queue and starts
// the runner when none runs. The resume of a suspended turn goes first:
// turns queued behind it when the process died wait for it (see park).
func (h *Session) push(job Job) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, fmt.Errorf("%w: session %s is closing", ErrConflict, h.id)
	}
	defer h.noteQueueLocked(h.queueIDsLocked()) // runs before the unlock
	front := job.Kind == JobResume && h.state == StateSuspended
	atRest := !h.state.Busy()
	if atRest {
		// At rest, suspended, or between a turn_end and the runner's next
		// look at the queue.
		if err := h.moveLocked(StateQueued, nil); err != nil {
			return 0, fmt.Errorf("%w: %w", ErrConflict, err)
		}
	}
	ahead := len(h.queue)
	if front {
		h.queue, ahead = append([]Job{job}, h.queue...), 0
	} else {
		h.queue = append(h.queue, job)
	}
	switch {
	case h.runDone == nil:
		// No runner: the first job becomes the current turn now, under the
		// lock, so that an interrupt from here on stops it (it is never
		// dropped as if it were queued behind another).
		first := h.takeLocked()
		done := make(chan struct{})
		h.runDone = done
		h.s.wg.Go(func() {
			defer close(done)
			h.run(first)
		})
		return ahead, nil
	case atRest && h.handoff == nil:
		// The runner is between a turn_end and its next look at the queue:
		// the first job is the current turn now, handed to it.
		tk := h.takeLocked()
		h.handoff = &tk
		return ahead, nil
	}
	return ahead + 1, nil // behind the running turn and those queued before
}

// takenTurn is a job the runner works on, with the context that
// turn.interrupt cancels.
type takenTurn struct {
	job    Job
	ctx    context.Context
	cancel context.CancelFunc
}

// takeLocked makes the first queued job the current turn, with its own
// context (cancelled by turn.interrupt through stopTurn).
func (h *Session) takeLocked() takenTurn {
	job := h.queue[0]
	h.queue = h.queue[1:]
	h.current = job.ID
	ctx, cancel := context.WithCancel(h.s.ctx)
	h.stopTurn = cancel
	return takenTurn{job: job, ctx: ctx, cancel: cancel}
}

// park queues a stored job of a suspended session without starting it:
// the turns queued behind a turn that died waiting for answers run once
// that turn is resumed (push puts its resume first) or ended (turn.start
// ends it and starts the queue; turn.interrupt drops the queue with it).
func (h *Session) park(job Job) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = append(h.queue, job)
}

// run works through the queue, one turn at a time, starting with tk
// (taken by push).
func (h *Session) run(tk takenTurn) {
	for {
		h.runTurn(tk.ctx, tk.job)
		tk.cancel() // the turn's context ends with it
		h.mu.Lock()
		if h.handoff != nil && !h.closed {
			tk, h.handoff = *h.handoff, nil
			h.mu.Unlock()
			continue
		}
		if h.handoff == nil && len(h.queue) > 0 && !h.closed {
			tk = h.takeLocked()
			h.queueChangedLocked(nil) // its entry left the queue
			h.mu.Unlock()
			continue
		}
		if h.handoff != nil {
			h.handoff.cancel() // closing: it stays in the store's queue for the next start
			h.handoff = nil
		}
		h.queue = nil
		h.current = ""
		h.stopTurn = nil
		h.runDone = nil
		// The last job produced no turn_end (a resume with nothing to
		// resume): the session is at rest.
		if h.state.Busy() && !h.closed {
			_ = h.moveLocked(StateIdle, nil) // logged when illegal
		}
		h.mu.Unlock()
		return
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
		h.recordFailure(job, err, "engine_unavailable")
		return
	}
	events := eng.Run(ctx, engine.Turn{Kind: job.Kind.engineKind(), ID: job.ID, From: job.From, Input: job.Input})
	completed, interrupted, yielded := false, false, false
	for ev := range events {
		yielded = true
		if end, ok := ev.Data.(protocol.TurnEndData); ok {
			completed = end.Status == protocol.TurnCompleted
			interrupted = end.Status == protocol.TurnInterrupted
		}
		if h.answeredBefore(ev) {
			// A resumed turn re-asks a request answered before the restart;
			// the bridge answers it at once, so the UI never sees it again.
			continue
		}
		h.record(eng, ev)
		if ev.Type == protocol.EventToolStarted || ev.Type == protocol.EventTurnEnd {
			h.saveGrantsIfNew(eng)
		}
	}
	if !yielded && job.Kind != JobResume {
		// A retry whose error another retry already cleared: the turn id
		// was given out, so it still gets its one turn_end.
		h.recordFailure(job, fmt.Errorf("%w: %w", ErrConflict, engine.ErrNothingToRetry), "nothing_to_retry")
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
		h.closeRequests(cctx, "the turn was interrupted")
	}
}

// closeRequests closes the session's open requests and records their
// request_resolved {outcome: turn_ended}.
func (h *Session) closeRequests(ctx context.Context, note string) {
	st := h.s.opts.Store
	pend, err := st.PendingRequests(ctx, h.id)
	if err != nil {
		h.s.log.Warn("close requests", "session", h.id, "err", err)
		return
	}
	ids, err := st.CloseRequests(ctx, h.id, note)
	if err != nil {
		h.s.log.Warn("close requests", "session", h.id, "err", err)
		return
	}
	closed := make(map[string]bool, len(ids))
	for _, id := range ids {
		closed[id] = true
	}
	for _, p := range pend {
		if closed[p.RequestID] {
			h.recordResolved(p.TurnID, p.RequestID, p.Kind, protocol.OutcomeTurnEnded)
		}
	}
}

// answeredBefore reports whether ev is an interactive event whose tool call
// was answered before a restart (see preAnswered).
func (h *Session) answeredBefore(ev engine.Event) bool {
	if !ev.Type.Interactive() {
		return false
	}
	callID := factsOf(ev).ReqID
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.preAnswered[callID]
	return ok && callID != ""
}

// record hands an event to the store, with the state it moves the
// session to; it is broadcast after the commit.
func (h *Session) record(eng *engine.Engine, ev engine.Event) {
	if h.deltas.add(ev, func(seal func() store.EventInput) { h.s.opts.Store.EnqueueSealed(h.id, seal, h.committedEvent) }) {
		return
	}
	h.deltas.cut()
	var history func() []llm.Message
	if eng != nil {
		history = eng.Messages
	}
	in, err := durableInput(ev, history, "")
	if err != nil {
		h.s.log.Error("record event", "session", h.id, "type", ev.Type, "err", err)
		return
	}
	if eng != nil && ev.Type == protocol.EventTurnEnd && !in.ClosePending {
		// The user interrupted a turn of this process (one that died with
		// the process is settled by RecoverInterrupted instead): its open
		// requests close with its turn_end, each with its request_resolved.
		in.ClosePending, in.Resolved = true, closedResolved
	}
	h.enqueueMoving(ev, in)
}

// enqueueMoving applies the move ev makes (if any) and queues the event
// with it, both under h.mu (see moveLocked).
func (h *Session) enqueueMoving(ev engine.Event, in store.EventInput) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if to, ok := stateAfter(ev, len(h.queue) > 0); ok {
		_ = h.moveLocked(to, &in) // an illegal move is logged; the event is stored without it
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
func (h *Session) recordFailure(job Job, cause error, reason string) {
	turnID := job.ID
	now := time.Now().UTC().Format(time.RFC3339Nano)
	errType := "engine"
	if h.s.opts.IsConfigError(cause) {
		errType = "config"
	}
	// Like the engine's own, both carry the turn's taskId.
	lang := h.s.opts.Lang(h.id)
	errData := protocol.EventErrorData{Error: cause.Error(), ErrorType: errType, Message: engine.ErrorMessage(lang, errType, cause), LogTime: now}
	errData.TaskID = turnID
	endData := protocol.TurnEndData{Status: protocol.TurnError, ProducedFiles: []string{}, Reason: reason, Message: engine.ReasonMessage(lang, reason)}
	endData.TaskID = turnID
	// Every turn opens with its turn_start, also one that never reached
	// the engine: a shell that draws a turn from turn_start to turn_end
	// sees this one too.
	startData := protocol.TurnStartData{Input: job.Input.Text, Resumed: job.Kind == JobResume}
	startData.TaskID = turnID
	evs := []engine.Event{{Type: protocol.EventTurnStart, Data: startData}, {Type: protocol.EventError, Data: errData}, {Type: protocol.EventTurnEnd, Data: endData}}
	for _, ev := range evs {
		h.record(nil, ev)
	}
}

// Interrupt stops the running turn and drops the queued ones; it returns
// whether a turn was running and the ids of the dropped turns.
func (h *Session) Interrupt() (bool, []string) {
	h.mu.Lock()
	eng := h.eng
	running := h.state.Busy()
	stop := h.stopTurn
	dropped := make([]string, 0, len(h.queue))
	for _, j := range h.queue {
		dropped = append(dropped, j.ID)
	}
	stored := h.dropLocked(dropped)
	h.mu.Unlock()
	h.waitStored(stored, "drop queued turns")
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
	closing := h.s.isClosing()
	h.mu.Lock()
	eng := h.eng
	var dropped []string
	if !closing { // at shutdown queued turns stay in the store: they run after the restart
		for _, j := range h.queue {
			dropped = append(dropped, j.ID)
		}
	}
	stored := h.dropLocked(dropped)
	awaiting := h.state == StateAwaiting
	h.mu.Unlock()
	h.waitStored(stored, "drop queued turns")
	if eng == nil {
		return
	}
	if awaiting && closing {
		eng.Suspend()
		return
	}
	eng.Interrupt()
}

// dropLocked empties the runner's queue; the dropped turns leave the
// store's queue with the queue_changed event that says so (queued behind
// the writes before it, so a turn_start already queued is not overtaken).
// The channel gets the commit's result (nil when nothing was dropped).
func (h *Session) dropLocked(dropped []string) <-chan error {
	h.queue = nil
	if len(dropped) == 0 {
		return nil
	}
	return h.queueChangedLocked(&store.QueueEdit{Remove: dropped})
}

// waitStored waits (at most 5 s) for a queue change's commit and logs its
// failure.
func (h *Session) waitStored(stored <-chan error, what string) {
	if stored == nil {
		return
	}
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-stored:
		if err != nil {
			h.s.log.Warn(what, "session", h.id, "err", err)
		}
	case <-t.C:
		h.s.log.Warn(what, "session", h.id, "err", "not stored after 5s")
	}
}

// WaitIdle waits until the runner exits or ctx ends. A runner whose turn
// already ended (the state is at rest) may still be closing the turn's
// requests: it is waited for too.
func (h *Session) WaitIdle(ctx context.Context) error {
	h.mu.Lock()
	done := h.runDone
	h.mu.Unlock()
	if done == nil {
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

// lockLoad holds off engine loading until unlockLoad: the grant methods
// read and change grants with it held, so that a load never interleaves.
func (h *Session) lockLoad() { h.loadMu.Lock() }

// unlockLoad ends lockLoad.
func (h *Session) unlockLoad() { h.loadMu.Unlock() }

// lockResume serializes the resume-after-last-answer check (a request's
// answer, ending a suspended turn) until unlockResume.
func (h *Session) lockResume() { h.resumeMu.Lock() }

// unlockResume ends lockResume.
func (h *Session) unlockResume() { h.resumeMu.Unlock() }

// RecordSessionEvent records an event that belongs to no turn.
func (h *Session) RecordSessionEvent(ev engine.Event) {
	h.record(nil, ev)
}

// recordEvent records an event of turn turnID outside the runner (the end of a
// suspended turn); closePending closes the session's open requests in the
// event's transaction.
func (h *Session) recordEvent(ev engine.Event, turnID string, closePending bool) error {
	in, err := durableInput(ev, nil, "")
	if err != nil {
		return err
	}
	in.TurnID = turnID
	in.ClosePending = closePending
	if closePending {
		in.Resolved = closedResolved
	}
	h.deltas.cut()
	h.enqueueMoving(ev, in)
	return nil
}

// Ledger is the session's call ledger for its engine: the engine runs a
// tool only after the tool_started event it just emitted (queued by
// record) is committed, and a resumed turn never runs a call it lists.
func (h *Session) Ledger() engine.Ledger { return h.s.opts.Store.Ledger(h.id) }

var _ engine.Ledger = store.Ledger{}

// engineKind is the engine's turn kind of a job kind.
func (k JobKind) engineKind() engine.TurnKind {
	switch k {
	case JobRetry:
		return engine.TurnRetry
	case JobResume:
		return engine.TurnResume
	}
	return engine.TurnStart
}

// storeKind is the store's name of a job kind.
func (k JobKind) storeKind() string {
	switch k {
	case JobRetry:
		return store.TurnRetry
	case JobResume:
		return store.TurnResume
	}
	return store.TurnStart
}

// queuedTurnInput is a queued turn's input as the store keeps it: the text
// and the refs of its saved attachments (their bytes are on disk).
type queuedTurnInput struct {
	Text string                 `json:"text,omitempty"`
	Refs []llm.StoredAttachment `json:"refs,omitempty"`
}

func queuedInput(in engine.Input) json.RawMessage {
	b, _ := json.Marshal(queuedTurnInput{Text: in.Text, Refs: in.Refs}) // strings only: cannot fail
	return b
}

// jobOf rebuilds a stored queued turn, reading its attachments back.
func (h *Session) jobOf(qt store.QueuedTurn) (Job, error) {
	job := Job{ID: qt.TurnID, From: qt.From, Queued: qt.CreatedAt}
	switch qt.Kind {
	case store.TurnStart:
		job.Kind = JobStart
	case store.TurnRetry:
		job.Kind = JobRetry
	case store.TurnResume:
		job.Kind = JobResume
	default:
		return Job{}, fmt.Errorf("queued turn %s: kind %q", qt.TurnID, qt.Kind)
	}
	var in queuedTurnInput
	if err := json.Unmarshal(qt.Input, &in); err != nil {
		return Job{}, fmt.Errorf("queued turn %s: %w", qt.TurnID, err)
	}
	job.Input = engine.Input{Text: in.Text, Refs: in.Refs}
	for _, r := range in.Refs {
		// Checked now (a bad file ends the turn before it runs); the bytes
		// are read again only when a model request is built (llm.Attachment.Path).
		dir := h.s.opts.Store.SessionDir(h.id)
		name, mime, _, err := media.ReadStoredAttachment(dir, r.Path)
		if err != nil {
			return Job{}, fmt.Errorf("queued turn %s: %w", qt.TurnID, err)
		}
		job.Input.Attachments = append(job.Input.Attachments, llm.Attachment{Name: name, MimeType: mime, Path: filepath.Join(dir, filepath.FromSlash(r.Path))})
	}
	return job, nil
}

// ResumeQueued starts the turns a previous process acknowledged and did not
// start (the store's turn queue), in order. The server calls it once, when
// it starts serving, after RecoverInterrupted.
func (s *Sessions) ResumeQueued(ctx context.Context) error {
	ids, err := s.opts.Store.SessionsWithQueuedTurns(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		h, err := s.Session(ctx, id)
		if err != nil {
			return err
		}
		qts, err := s.opts.Store.QueuedTurns(ctx, id)
		if err != nil {
			return err
		}
		// A resume continues the turn the queued ones were behind.
		rank := func(qt store.QueuedTurn) int {
			if qt.Kind == store.TurnResume {
				return 0
			}
			return 1
		}
		slices.SortStableFunc(qts, func(a, b store.QueuedTurn) int { return cmp.Compare(rank(a), rank(b)) })
		suspended := h.turnState() == StateSuspended
		for _, qt := range qts {
			job, err := h.jobOf(qt)
			if err != nil {
				// It can never run: it ends now, with its one turn_end.
				s.log.Warn("queued turn", "session", id, "err", err)
				h.recordFailure(Job{ID: qt.TurnID}, err, "queued_turn_unreadable")
				continue
			}
			if suspended {
				h.park(job)
				continue
			}
			if _, err := h.push(job); err != nil {
				return err
			}
		}
	}
	return nil
}
