package wsrpc

import (
	"context"
	"sync"
)

// sendQueue is a connection's outgoing queue, bounded in bytes (not
// frames): a big frame and many small ones cost what they weigh, and one
// terminal or subscription cannot take every slot. A frame larger than the
// whole bound is still accepted when the queue is empty, so nothing is too
// big to send. Frames that must not wait (broadcasts) have noWaitHeadroom
// bytes above the bound: a queue that streams fill up to the bound while a
// client reads steadily still takes them.
type sendQueue struct {
	max int // bytes

	mu     sync.Mutex // guards frames, bytes
	frames [][]byte
	bytes  int

	ready chan struct{} // capacity 1: frames were added
	space chan struct{} // capacity 1: frames were taken
}

func newSendQueue(maxBytes int) *sendQueue {
	return &sendQueue{max: maxBytes, ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// noWaitHeadroom is what a no-wait frame may use above the bound.
const noWaitHeadroom = 1 << 20

// tryPush queues b when it fits; false when the queue is too full.
func (q *sendQueue) tryPush(b []byte) bool { return q.offer(b, q.max) }

// tryPushNoWait is tryPush with noWaitHeadroom above the bound.
func (q *sendQueue) tryPushNoWait(b []byte) bool { return q.offer(b, q.max+noWaitHeadroom) }

func (q *sendQueue) offer(b []byte, limit int) bool {
	q.mu.Lock()
	if q.bytes > 0 && q.bytes+len(b) > limit {
		q.mu.Unlock()
		return false
	}
	q.frames = append(q.frames, b)
	q.bytes += len(b)
	q.mu.Unlock()
	signal(q.ready)
	return true
}

// push queues b, waiting while the queue is full; false when ctx ended.
func (q *sendQueue) push(ctx context.Context, b []byte) bool {
	for !q.tryPush(b) {
		select {
		case <-q.space:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// take removes the oldest frame; nil when the queue is empty.
func (q *sendQueue) take() []byte {
	q.mu.Lock()
	if len(q.frames) == 0 {
		q.mu.Unlock()
		return nil
	}
	b := q.frames[0]
	q.frames[0] = nil
	q.frames = q.frames[1:]
	if len(q.frames) == 0 {
		q.frames = nil // give a burst's backing array back
	}
	q.bytes -= len(b)
	q.mu.Unlock()
	signal(q.space)
	return b
}
