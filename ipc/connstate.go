package ipc

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

// conn is the server's state of one client connection (the transport's
// wsrpc.Conn, which it embeds, owns the socket, the queue and the request
// goroutines): its session subscriptions and the sessions it started turns
// in.
type conn struct {
	*wsrpc.Conn
	s *Server

	interruptOnDisconnect atomic.Bool

	fileSearch latestCall // the running files.search (files.go)

	id     string                              // opaque connection id (session.presence)
	client atomic.Pointer[protocol.ClientInfo] // initialize's client

	// subMu makes a session.subscribe's fence of the old subscription and
	// install of the new one one step (requests of a connection run
	// concurrently: a second subscribe must fence the first one's stream,
	// not miss it), and likewise session.unsubscribe. It is never held
	// across an answer. Taken before mu.
	subMu sync.Mutex

	mu       sync.Mutex                       // guards subs, turnSess
	subs     map[string]*backend.Subscription // by session id
	turnSess map[string]struct{}              // sessions this connection started turns in
}

func newConn(s *Server, wc *wsrpc.Conn) *conn {
	c := &conn{
		Conn:     wc,
		s:        s,
		id:       "conn_" + uuid.NewString(),
		subs:     map[string]*backend.Subscription{},
		turnSess: map[string]struct{}{},
	}
	wc.SetState(c)
	wc.OnEnd(c.ended)
	return c
}

// presence is the connection as session.presence lists it.
func (c *conn) presence() protocol.PresenceClient {
	p := protocol.PresenceClient{ConnectionID: c.id}
	if ci := c.client.Load(); ci != nil {
		p.Name, p.Version = ci.Name, ci.Version
	}
	return p
}

// connOf is the server's state of a transport connection.
func connOf(wc *wsrpc.Conn) *conn { return wc.State().(*conn) }

// ended runs once the connection's requests and pumps returned.
func (c *conn) ended() {
	c.dropAllSubs()
	c.s.b.DropClient(c.Conn) // the session servers it added live as long as it
	if c.interruptOnDisconnect.Load() {
		c.interruptTurns()
	}
}

func (c *conn) noteTurn(sessionID string) {
	c.mu.Lock()
	c.turnSess[sessionID] = struct{}{}
	c.mu.Unlock()
}

// interruptTurns interrupts the running turns of the sessions this
// connection started turns in (initialize's interruptOnDisconnect).
func (c *conn) interruptTurns() {
	c.mu.Lock()
	ids := make([]string, 0, len(c.turnSess))
	for id := range c.turnSess {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	c.s.b.InterruptSessions(ids)
}

// dropAllSubs ends the connection's subscriptions (it is closing).
func (c *conn) dropAllSubs() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, sub := range c.subs {
		sub.Cancel()
		delete(c.subs, id)
	}
}

// fenceSub ends the connection's subscription of a session, if any, and
// waits (bounded by ctx) until its pump stopped: nothing of it is queued
// after fenceSub returns. It reports the last seq that subscription queued
// (-1 when there was none). Subscribe and unsubscribe fence before they
// answer, so an old stream never interleaves with what follows the answer.
func (c *conn) fenceSub(ctx context.Context, sessionID string) (int64, error) {
	c.mu.Lock()
	old := c.subs[sessionID]
	delete(c.subs, sessionID)
	c.mu.Unlock()
	if old == nil {
		return -1, nil
	}
	old.Cancel()
	select {
	case <-old.Done():
		return old.Sent(), nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// setSub installs sub as the connection's subscription of its session. A
// subscription installed meanwhile by a concurrent subscribe is ended.
func (c *conn) setSub(sub *backend.Subscription) {
	c.mu.Lock()
	old := c.subs[sub.SessionID()]
	c.subs[sub.SessionID()] = sub
	c.mu.Unlock()
	if old != nil {
		old.Cancel()
	}
}
