package backend

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/media"
)

// MaxTurnText bounds the text of turn.start and turn.steer (bytes): a
// larger text is refused with -32602 instead of becoming an event sent to
// every subscriber and stored.
const MaxTurnText = 1 << 20

func newTurnID() string { return "turn_" + uuid.NewString() }

// StartTurn queues a new turn of the session with the text and the
// uploads (saved under the session's folder); a suspended turn ends first.
func (b *Backend) StartTurn(ctx context.Context, sessionID, text string, uploads []media.Upload) (protocol.TurnResult, error) {
	p := struct {
		SessionID, Text string
		Attachments     []media.Upload
	}{sessionID, text, uploads}
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.TurnResult{}, err
	}
	atts, refs, err := saveAttachments(b.opts.Store.SessionDir(p.SessionID), p.Attachments)
	if err != nil {
		return protocol.TurnResult{}, err
	}
	// A new turn ends a suspended one (its requests are closed, it gets its
	// one turn_end) rather than leaving it answerable behind the new turn.
	if _, err := b.endSuspended(ctx, h); err != nil {
		return protocol.TurnResult{}, err
	}
	id := newTurnID()
	pos, err := h.Enqueue(ctx, Job{Kind: JobStart, ID: id, Input: engine.Input{Text: p.Text, Attachments: atts, Refs: refs}})
	if err != nil {
		return protocol.TurnResult{}, err
	}
	return protocol.TurnResult{TurnID: id, Queued: pos}, nil
}

func (b *Backend) Interrupt(ctx context.Context, p protocol.SessionIDParams) (protocol.TurnInterruptResult, error) {
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.TurnInterruptResult{}, err
	}
	running, dropped := h.Interrupt()
	if !running {
		// A suspended turn (it died waiting for answers) ends here: its
		// requests are closed and it gets its one turn_end.
		ended, err := b.endSuspended(ctx, h)
		if err != nil {
			return protocol.TurnInterruptResult{}, err
		}
		running = ended
	}
	if dropped == nil {
		dropped = []string{}
	}
	return protocol.TurnInterruptResult{Interrupted: running, Dropped: dropped}, nil
}

func (b *Backend) Retry(ctx context.Context, p protocol.SessionIDParams) (protocol.TurnResult, error) {
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.TurnResult{}, err
	}
	eng, err := h.Engine(ctx)
	if err != nil {
		return protocol.TurnResult{}, err
	}
	if h.Running() {
		return protocol.TurnResult{}, fmt.Errorf("%w: session %s has a running turn; retry after it ended", ErrConflict, p.SessionID)
	}
	if last := eng.LastError(); last == nil || !last.Retriable {
		return protocol.TurnResult{}, fmt.Errorf("%w: %w", ErrConflict, engine.ErrNothingToRetry)
	}
	id := newTurnID()
	pos, err := h.Enqueue(ctx, Job{Kind: JobRetry, ID: id})
	if err != nil {
		return protocol.TurnResult{}, err
	}
	return protocol.TurnResult{TurnID: id, Queued: pos}, nil
}

// Resume continues the session's last turn (its unanswered calls). queued
// is false when there was nothing to queue: an answer had already resumed
// that turn, which runs.
func (b *Backend) Resume(ctx context.Context, p protocol.SessionIDParams) (res protocol.TurnResult, queued bool, err error) {
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return res, false, err
	}
	turnID, err := b.resumeTurnID(ctx, p.SessionID)
	if err != nil {
		return res, false, err
	}
	if cur := h.CurrentTurn(); cur != "" {
		if cur == turnID {
			// An answer already resumed this turn: nothing more to do.
			return protocol.TurnResult{TurnID: turnID}, false, nil
		}
		return res, false, fmt.Errorf("%w: session %s has a running turn", ErrConflict, p.SessionID)
	}
	eng, err := h.Engine(ctx)
	if err != nil {
		return res, false, err
	}
	if !eng.Resumable() {
		return res, false, fmt.Errorf("%w: session %s has no turn to resume (its last turn left no call unanswered)", ErrConflict, p.SessionID)
	}
	// A suspended turn resumes under its own id. A turn that already got
	// its turn_end (it died with nothing pending) is continued by a new
	// turn: every turn id has exactly one turn_end.
	id := turnID
	if h.turnState() != StateSuspended {
		id = newTurnID()
	}
	pos, err := h.Enqueue(ctx, Job{Kind: JobResume, ID: id, From: turnID})
	if err != nil {
		return res, false, err
	}
	return protocol.TurnResult{TurnID: id, Queued: pos}, true, nil
}

// resumeTurnID is the turn a resume continues: the turn of the session's
// pending requests, else the turn of its last stored event.
func (b *Backend) resumeTurnID(ctx context.Context, sessionID string) (string, error) {
	pend, err := b.opts.Store.PendingRequests(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if len(pend) > 0 {
		return pend[0].TurnID, nil
	}
	last, err := b.opts.Store.LastSeq(ctx, sessionID)
	if err != nil || last == 0 {
		return "", err
	}
	evs, err := b.opts.Store.EventsAfter(ctx, sessionID, last-1, 1)
	if err != nil || len(evs) == 0 {
		return "", err
	}
	return evs[0].TurnID, nil
}

func (b *Backend) Steer(ctx context.Context, p protocol.TurnSteerParams) (protocol.TurnSteerResult, error) {
	if len(p.Text) > MaxTurnText {
		return protocol.TurnSteerResult{}, protocol.InvalidField("text", fmt.Sprintf("%d bytes; at most %d", len(p.Text), MaxTurnText))
	}
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.TurnSteerResult{}, err
	}
	if !h.Running() {
		return protocol.TurnSteerResult{}, fmt.Errorf("%w: no turn is running in session %s; use turn.start", ErrConflict, p.SessionID)
	}
	eng, err := h.Engine(ctx)
	if err != nil {
		return protocol.TurnSteerResult{}, err
	}
	eng.QueueSteering(p.Text, nil, nil)
	return protocol.TurnSteerResult{Queued: true}, nil
}

func (b *Backend) Unsteer(ctx context.Context, p protocol.TurnSteerParams) (protocol.TurnUnsteerResult, error) {
	if _, err := b.host(ctx, p.SessionID); err != nil {
		return protocol.TurnUnsteerResult{}, err
	}
	removed := false
	if eng := b.loadedEngine(p.SessionID); eng != nil {
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
func (b *Backend) endSuspended(ctx context.Context, h *Session) (bool, error) {
	h.lockResume() // never at the same time as an answer's resume
	defer h.unlockResume()
	if h.turnState() != StateSuspended {
		return false, nil
	}
	turnID, err := b.resumeTurnID(ctx, h.ID())
	if err != nil {
		return false, err
	}
	evs := []engine.Event{
		{Type: protocol.EventInterrupted, Data: protocol.InterruptedData{TaskID: turnID}},
		{Type: protocol.EventTurnEnd, Data: protocol.TurnEndData{TaskID: turnID, Status: protocol.TurnInterrupted, ProducedFiles: []string{}, Reason: SuspendedEndReason, Message: engine.ReasonMessage(b.langOf(h.ID()), SuspendedEndReason)}},
	}
	for _, ev := range evs {
		// The turn_end closes its requests: they are no longer answerable.
		if err := h.recordEvent(ev, turnID, ev.Type == protocol.EventTurnEnd); err != nil {
			return false, err
		}
	}
	if err := b.opts.Store.Flush(ctx); err != nil {
		return false, err
	}
	return true, nil
}
