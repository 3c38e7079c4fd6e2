package wsrpc

import (
	"context"
	"log/slog"
)

// NewDetached returns a connection without a socket whose queue (of
// queueBytes) nobody drains until Take: a test's stuck client. It ends
// with ctx.
func NewDetached(ctx context.Context, log *slog.Logger, queueBytes int) *Conn {
	ctx, cancel := context.WithCancel(ctx)
	return &Conn{log: log, ctx: ctx, cancel: cancel, q: newSendQueue(queueBytes)}
}

// Take removes the oldest queued frame; nil when the queue is empty.
func (c *Conn) Take() []byte { return c.q.take() }

// Queued has a value when frames were queued since the last Take found
// the queue empty.
func (c *Conn) Queued() <-chan struct{} { return c.q.ready }
