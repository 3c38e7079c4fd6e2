package store

import (
	"context"
	"fmt"
)

// EnqueueSealed queues one event whose content is decided only when the
// writer reaches it: seal runs once, on the writer goroutine, right before
// the event is written in its transaction. Until then the caller may keep
// adding to what seal will return; that is how a stream coalesces the
// deltas that arrive while the previous batch commits into one event (one
// row, one frame), so that the store is never more than one commit behind
// the model. The event keeps its place in the queue: events enqueued after
// it get later seqs, whatever seal returns.
//
// seal must be fast and must not call the Store. done is as for Enqueue;
// when the store is closed, done gets the error and seal never runs.
func (s *Store) EnqueueSealed(sessionID string, seal func() EventInput, done func(Event, error)) {
	o := &op{sessionID: sessionID, seal: seal}
	if done != nil {
		o.done = func(evs []Event, err error) {
			if err == nil && len(evs) == 0 {
				err = fmt.Errorf("%w: sealed event not written", ErrInvalid)
			}
			if err != nil {
				done(Event{}, fmt.Errorf("enqueue: %w", err))
				return
			}
			done(evs[0], nil)
		}
	}
	if err := s.submit(context.Background(), o); err != nil && done != nil {
		done(Event{}, fmt.Errorf("enqueue: %w", err))
	}
}

// sealNow runs the op's seal once and prepares its event; a retried op
// reuses the result.
func (o *op) sealNow() error {
	if o.seal != nil {
		seal := o.seal
		o.seal = nil
		pe, err := prepareEvent(seal())
		if err != nil {
			o.sealErr = err
		} else {
			o.evs = []preparedEvent{pe}
		}
	}
	return o.sealErr
}
