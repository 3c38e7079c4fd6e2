package ipc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/host"
	"github.com/zqagent/sidecar/protocol"
)

func (s *Server) turnRoutes() map[string]handler {
	return map[string]handler{
		"turn.start":     s.turnStart,
		"turn.interrupt": s.turnInterrupt,
		"turn.retry":     s.turnRetry,
		"turn.resume":    s.turnResume,
		"turn.steer":     s.turnSteer,
		"turn.unsteer":   s.turnUnsteer,
	}
}

// MaxTurnText bounds the text of turn.start and turn.steer (bytes): a
// larger text is refused with -32602 instead of becoming an event sent to
// every subscriber and stored.
const MaxTurnText = 1 << 20

// The wire types of turn.*.
type (
	// TurnStartParams are the params of turn.start.
	TurnStartParams = protocol.TurnStartParams
	// TurnResult is the result of turn.start, turn.retry and turn.resume.
	TurnResult = protocol.TurnResult

	steerParams = protocol.TurnSteerParams
)

func newTurnID() string { return "turn_" + uuid.NewString() }

func (s *Server) turnStart(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	p, err := decodeTurnStart(raw) // the attachments alias the frame: no copy
	if err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	atts, refs, err := saveAttachments(s.opts.Store.SessionDir(p.SessionID), p.Attachments)
	if err != nil {
		return nil, err
	}
	// A new turn ends a suspended one (its requests are closed, it gets its
	// one turn_end) rather than leaving it answerable behind the new turn.
	if _, err := s.endSuspended(ctx, h); err != nil {
		return nil, err
	}
	id := newTurnID()
	pos, err := h.Enqueue(ctx, host.Job{Kind: host.JobStart, ID: id, Input: engine.Input{Text: p.Text, Attachments: atts, Refs: refs}})
	if err != nil {
		return nil, err
	}
	c.noteTurn(p.SessionID)
	return TurnResult{TurnID: id, Queued: pos}, nil
}

func (s *Server) turnInterrupt(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	running, dropped := h.Interrupt()
	if !running {
		// A suspended turn (it died waiting for answers) ends here: its
		// requests are closed and it gets its one turn_end.
		ended, err := s.endSuspended(ctx, h)
		if err != nil {
			return nil, err
		}
		running = ended
	}
	if dropped == nil {
		dropped = []string{}
	}
	return protocol.TurnInterruptResult{Interrupted: running, Dropped: dropped}, nil
}

func (s *Server) turnRetry(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	eng, err := h.Engine(ctx)
	if err != nil {
		return nil, err
	}
	if h.Running() {
		return nil, fmt.Errorf("%w: session %s has a running turn; retry after it ended", ErrConflict, p.SessionID)
	}
	if last := eng.LastError(); last == nil || !last.Retriable {
		return nil, fmt.Errorf("%w: %w", ErrConflict, engine.ErrNothingToRetry)
	}
	id := newTurnID()
	pos, err := h.Enqueue(ctx, host.Job{Kind: host.JobRetry, ID: id})
	if err != nil {
		return nil, err
	}
	c.noteTurn(p.SessionID)
	return TurnResult{TurnID: id, Queued: pos}, nil
}

func (s *Server) turnResume(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	turnID, err := s.resumeTurnID(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if cur := h.CurrentTurn(); cur != "" {
		if cur == turnID {
			// An answer already resumed this turn: nothing more to do.
			return TurnResult{TurnID: turnID}, nil
		}
		return nil, fmt.Errorf("%w: session %s has a running turn", ErrConflict, p.SessionID)
	}
	eng, err := h.Engine(ctx)
	if err != nil {
		return nil, err
	}
	if !eng.Resumable() {
		return nil, fmt.Errorf("%w: session %s has no turn to resume (its last turn left no call unanswered)", ErrConflict, p.SessionID)
	}
	// A suspended turn resumes under its own id. A turn that already got
	// its turn_end (it died with nothing pending) is continued by a new
	// turn: every turn id has exactly one turn_end.
	id := turnID
	if h.State() != host.StateSuspended {
		id = newTurnID()
	}
	pos, err := h.Enqueue(ctx, host.Job{Kind: host.JobResume, ID: id, From: turnID})
	if err != nil {
		return nil, err
	}
	c.noteTurn(p.SessionID)
	return TurnResult{TurnID: id, Queued: pos}, nil
}

// resumeTurnID is the turn a resume continues: the turn of the session's
// pending requests, else the turn of its last stored event.
func (s *Server) resumeTurnID(ctx context.Context, sessionID string) (string, error) {
	pend, err := s.opts.Store.PendingRequests(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if len(pend) > 0 {
		return pend[0].TurnID, nil
	}
	last, err := s.opts.Store.LastSeq(ctx, sessionID)
	if err != nil || last == 0 {
		return "", err
	}
	evs, err := s.opts.Store.EventsAfter(ctx, sessionID, last-1, 1)
	if err != nil || len(evs) == 0 {
		return "", err
	}
	return evs[0].TurnID, nil
}

func (s *Server) turnSteer(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p steerParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if len(p.Text) > MaxTurnText {
		return nil, invalidField("text", fmt.Sprintf("%d bytes; at most %d", len(p.Text), MaxTurnText))
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if !h.Running() {
		return nil, fmt.Errorf("%w: no turn is running in session %s; use turn.start", ErrConflict, p.SessionID)
	}
	eng, err := h.Engine(ctx)
	if err != nil {
		return nil, err
	}
	eng.QueueSteering(p.Text, nil, nil)
	return protocol.TurnSteerResult{Queued: true}, nil
}

func (s *Server) turnUnsteer(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p steerParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if _, err := s.host(ctx, p.SessionID); err != nil {
		return nil, err
	}
	removed := false
	if eng := s.loadedEngine(p.SessionID); eng != nil {
		removed = eng.RemoveSteering(p.Text)
	}
	return protocol.TurnUnsteerResult{Removed: removed}, nil
}

// SuspendedEndReason is the turn_end reason of a suspended turn that
// turn.interrupt ended.
const SuspendedEndReason = "interrupted_while_suspended"

// endSuspended ends the session's suspended turn, if it has one (it died
// waiting for answers): it records the turn's interrupted event and its one
// turn_end, which closes its requests in the same transaction, and reports
// whether there was such a turn.
func (s *Server) endSuspended(ctx context.Context, h *host.Session) (bool, error) {
	h.LockResume() // never at the same time as an answer's resume
	defer h.UnlockResume()
	if h.State() != host.StateSuspended {
		return false, nil
	}
	turnID, err := s.resumeTurnID(ctx, h.ID())
	if err != nil {
		return false, err
	}
	evs := []engine.Event{
		{Type: protocol.EventInterrupted, Data: protocol.InterruptedData{TaskID: turnID}},
		{Type: protocol.EventTurnEnd, Data: protocol.TurnEndData{TaskID: turnID, Status: protocol.TurnInterrupted, ProducedFiles: []string{}, Reason: SuspendedEndReason, Message: engine.ReasonMessage(s.langOf(h.ID()), SuspendedEndReason)}},
	}
	for _, ev := range evs {
		// The turn_end closes its requests: they are no longer answerable.
		if err := h.Record(ev, turnID, ev.Type == protocol.EventTurnEnd); err != nil {
			return false, err
		}
	}
	if err := s.opts.Store.Flush(ctx); err != nil {
		return false, err
	}
	return true, nil
}
