package ipc

import (
	"context"
	"errors"
	"sync"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

// filesRoutes: files.* (the backend's files_search.go).
func filesRoutes() map[string]handler {
	return map[string]handler{
		"files.search": route(filesSearch),
	}
}

// errSuperseded ends a files.search that a newer one of its connection
// replaced (-32003, kind superseded).
var errSuperseded = errors.New("superseded by a newer files.search on this connection")

// filesSearch runs one files.search as the connection's latest: a newer
// call (by arrival) cancels it, and it fails with errSuperseded unless it
// had finished.
func filesSearch(ctx context.Context, b *backend.Backend, c *conn, p protocol.FilesSearchParams) (protocol.FilesSearchResult, error) {
	ctx, done, err := c.fileSearch.begin(ctx, wsrpc.Arrival(ctx))
	if err != nil {
		return protocol.FilesSearchResult{}, err
	}
	defer done()
	res, err := b.FilesSearch(ctx, p)
	if err != nil && errors.Is(context.Cause(ctx), errSuperseded) {
		return protocol.FilesSearchResult{}, errSuperseded
	}
	return res, err
}

// latestCall keeps one call of a method per connection running: the one
// that arrived last (wsrpc.Arrival; the transport runs a connection's
// requests concurrently, so the handlers may start in another order).
type latestCall struct {
	mu      sync.Mutex
	arrival uint64                  // guarded by mu; the newest call begun
	cancel  context.CancelCauseFunc // guarded by mu; ends it, nil once it ended
}

// begin starts the call of ctx, the connection's arrival'th request: it
// cancels an older one still running (cause errSuperseded) and fails with
// errSuperseded when a newer one has begun already. done must be called
// when the call ends.
func (l *latestCall) begin(ctx context.Context, arrival uint64) (context.Context, func(), error) {
	n := arrival
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < l.arrival {
		return nil, nil, errSuperseded
	}
	if l.cancel != nil {
		l.cancel(errSuperseded)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	l.arrival, l.cancel = n, cancel
	return ctx, func() {
		l.mu.Lock()
		if l.arrival == n {
			l.cancel = nil
		}
		l.mu.Unlock()
		cancel(nil)
	}, nil
}
