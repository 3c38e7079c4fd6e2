package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// This file is the editable queue (queue.*): the turns turn.start
// acknowledged that have not started. The runner's queue (Session.queue,
// under h.mu) is the order; every change of it queues, still under h.mu, a
// queue_changed event carrying the new order and, in that event's
// transaction, the same change of the store's turn queue. So the store's
// queue, the event log and the runner never disagree, a change survives
// kill -9 once its call returned, and the events come in the order the
// changes were made.

// ErrAlreadyStarted is what queue.update, queue.move and queue.remove fail
// with for a turn that has left the queue (it started).
var ErrAlreadyStarted = errors.New("the turn has started")

// QueueList returns the session's queued turns in the order they will start.
func (b *Backend) QueueList(ctx context.Context, p protocol.SessionIDParams) (protocol.QueueListResult, error) {
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.QueueListResult{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return protocol.QueueListResult{Entries: h.entriesLocked()}, nil
}

// QueueUpdate replaces a queued turn's text (its attachments stay).
func (b *Backend) QueueUpdate(ctx context.Context, p protocol.QueueUpdateParams) (protocol.QueueListResult, error) {
	if len(p.Text) > MaxTurnText {
		return protocol.QueueListResult{}, protocol.InvalidField("text", fmt.Sprintf("%d bytes; at most %d", len(p.Text), MaxTurnText))
	}
	return b.editQueue(ctx, p.SessionID, p.TurnID, "", func(q []Job, i int) ([]Job, *store.QueueEdit, error) {
		if q[i].Kind != JobStart {
			return nil, nil, fmt.Errorf("%w: turn %s is a retry or resume: it has no text to edit", ErrConflict, p.TurnID)
		}
		if p.Text == "" && len(q[i].Input.Refs) == 0 {
			return nil, nil, protocol.InvalidField("text", "empty, and the turn has no attachment")
		}
		q[i].Input.Text = p.Text
		return q, &store.QueueEdit{Inputs: map[string]json.RawMessage{p.TurnID: queuedInput(q[i].Input)}}, nil
	})
}

// QueueMove moves a queued turn in front of another (to the end when
// beforeTurnId is absent).
func (b *Backend) QueueMove(ctx context.Context, p protocol.QueueMoveParams) (protocol.QueueListResult, error) {
	return b.editQueue(ctx, p.SessionID, p.TurnID, p.BeforeTurnID, func(q []Job, i int) ([]Job, *store.QueueEdit, error) {
		job := q[i]
		q = slices.Delete(q, i, i+1)
		at := len(q)
		if p.BeforeTurnID != "" {
			at = slices.IndexFunc(q, func(j Job) bool { return j.ID == p.BeforeTurnID })
			if at < 0 { // beforeTurnId is the turn itself: it stays where it was
				at = i
			}
		}
		q = slices.Insert(q, at, job)
		order := make([]string, len(q))
		for k, j := range q {
			order[k] = j.ID
		}
		return q, &store.QueueEdit{Order: order}, nil
	})
}

// QueueRemove takes a queued turn out of the queue: it never runs.
func (b *Backend) QueueRemove(ctx context.Context, p protocol.QueueTurnParams) (protocol.QueueListResult, error) {
	return b.editQueue(ctx, p.SessionID, p.TurnID, "", func(q []Job, i int) ([]Job, *store.QueueEdit, error) {
		return slices.Delete(q, i, i+1), &store.QueueEdit{Remove: []string{p.TurnID}}, nil
	})
}

// editQueue applies change to a copy of the session's queue (i is turnID's
// index) under h.mu, stores it with its queue_changed event and waits for
// the commit. other is a second turn the change needs queued ("" for none).
func (b *Backend) editQueue(ctx context.Context, sessionID, turnID, other string, change func(q []Job, i int) ([]Job, *store.QueueEdit, error)) (protocol.QueueListResult, error) {
	if turnID == "" {
		return protocol.QueueListResult{}, protocol.InvalidField("turnId", "required")
	}
	h, err := b.host(ctx, sessionID)
	if err != nil {
		return protocol.QueueListResult{}, err
	}
	h.mu.Lock()
	i := h.queueIndexLocked(turnID)
	missing := ""
	switch {
	case i < 0:
		missing = turnID
	case other != "" && h.queueIndexLocked(other) < 0:
		missing = other
	}
	if missing != "" {
		current := h.current
		h.mu.Unlock()
		return protocol.QueueListResult{}, h.notQueued(ctx, missing, current)
	}
	q, edit, err := change(slices.Clone(h.queue), i)
	if err != nil {
		h.mu.Unlock()
		return protocol.QueueListResult{}, err
	}
	h.queue = q
	stored := h.queueChangedLocked(edit)
	res := protocol.QueueListResult{Entries: h.entriesLocked()}
	h.mu.Unlock()
	select {
	case err := <-stored:
		if err != nil {
			return protocol.QueueListResult{}, fmt.Errorf("store the queue: %w", err)
		}
	case <-ctx.Done():
		return protocol.QueueListResult{}, ctx.Err()
	}
	return res, nil
}

// notQueued is the error for a turn id the queue does not hold: the turn
// started (the runner took it, or its turn_start is stored) or is unknown.
func (h *Session) notQueued(ctx context.Context, turnID, current string) error {
	started := turnID == current
	if !started {
		var err error
		if started, err = h.s.opts.Store.TurnStarted(ctx, h.id, turnID); err != nil {
			return err
		}
	}
	if started {
		return fmt.Errorf("%w: turn %s is no longer queued in session %s", ErrAlreadyStarted, turnID, h.id)
	}
	return fmt.Errorf("%w: turn %s is not queued in session %s", ErrNotFound, turnID, h.id)
}

func (h *Session) queueIndexLocked(turnID string) int {
	return slices.IndexFunc(h.queue, func(j Job) bool { return j.ID == turnID })
}

// queueIDsLocked is the queue's turn ids, in order.
func (h *Session) queueIDsLocked() []string {
	ids := make([]string, len(h.queue))
	for i, j := range h.queue {
		ids[i] = j.ID
	}
	return ids
}

// noteQueueLocked records a queue_changed event when the queue's turns
// differ from before (push: a turn that waits joined it, or one left it).
func (h *Session) noteQueueLocked(before []string) {
	if !slices.Equal(before, h.queueIDsLocked()) {
		h.queueChangedLocked(nil)
	}
}

// entriesLocked is the queue on the wire.
func (h *Session) entriesLocked() []protocol.QueueEntry {
	out := make([]protocol.QueueEntry, len(h.queue))
	for i, j := range h.queue {
		refs := make([]protocol.AttachmentRef, len(j.Input.Refs))
		for k, r := range j.Input.Refs {
			refs[k] = protocol.AttachmentRef{Name: r.Name, MimeType: r.MimeType, Size: r.Size, Path: r.Path}
		}
		out[i] = protocol.QueueEntry{TurnID: j.ID, Text: j.Input.Text, Attachments: refs, Position: i, CreatedAt: j.Queued.UTC().Format(time.RFC3339Nano)}
	}
	return out
}

// queueChangedLocked queues a queue_changed event with the queue as it is
// now and, in its transaction, edit (nil: the store's queue is already
// right). The channel gets the commit's result.
func (h *Session) queueChangedLocked(edit *store.QueueEdit) <-chan error {
	stored := make(chan error, 1)
	ev := engine.Event{Type: protocol.EventQueueChanged, Data: protocol.QueueChangedData{Entries: h.entriesLocked()}}
	in, err := durableInput(ev, nil, "")
	if err != nil {
		stored <- err
		return stored
	}
	in.Queue = edit
	h.deltas.cut() // a stream's later deltas come after it
	h.s.opts.Store.Enqueue(h.id, in, func(e store.Event, err error) {
		h.committedEvent(e, err)
		stored <- err
	})
	return stored
}
