package ipc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// conn is one client connection: a reader (serve), a writer goroutine fed by
// the bounded out queue, and a goroutine per in-flight request.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	log    *slog.Logger
	ctx    context.Context // ends when the connection ends
	cancel context.CancelFunc
	q      *sendQueue    // bounded in bytes; drained by writeLoop
	watch  *stallWatch   // closes the connection when its socket stalls
	slots  chan struct{} // bounds in-flight requests
	wg     sync.WaitGroup

	bigFrames             atomic.Bool // a frame of bigFrame bytes or more was read
	initialized           atomic.Bool
	interruptOnDisconnect atomic.Bool
	closeOnce             sync.Once
	closeCh               chan closeReq // capacity 1; the writer closes the socket

	// subMu makes a session.subscribe's fence of the old subscription and
	// install of the new one one step (requests of a connection run
	// concurrently: a second subscribe must fence the first one's stream,
	// not miss it), and likewise session.unsubscribe. It is never held
	// across an answer. Taken before mu.
	subMu sync.Mutex

	mu       sync.Mutex               // guards subs, turnSess
	subs     map[string]*subscription // by session id
	turnSess map[string]struct{}      // sessions this connection started turns in
}

var connSeq atomic.Uint64

// bigFrame is the frame size from which the memory of handling it is given
// back to the OS afterwards (releaseMemory).
const bigFrame = 8 << 20

func newConn(s *Server, ws *websocket.Conn) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &conn{
		s:        s,
		ws:       ws,
		log:      s.log.With("conn", connSeq.Add(1)),
		ctx:      ctx,
		cancel:   cancel,
		q:        newSendQueue(s.opts.SendQueueBytes),
		closeCh:  make(chan closeReq, 1),
		slots:    make(chan struct{}, maxInFlight),
		subs:     map[string]*subscription{},
		turnSess: map[string]struct{}{},
	}
	c.watch = newStallWatch(s.opts.WriteTimeout, func() {
		c.log.Info("client fell behind: its socket took nothing for the write timeout; closing", "timeout", s.opts.WriteTimeout)
		c.cancel()
	})
	return c
}

// serve reads frames until the connection ends, then cleans up: it cancels
// the connection's requests and subscriptions and waits for them.
func (c *conn) serve() {
	c.log.Debug("connected")
	c.wg.Go(c.writeLoop)
	c.readLoop()
	c.closeOnce.Do(func() {}) // no close request after the end
	c.cancel()
	c.dropAllSubs()
	c.wg.Wait()
	c.ws.CloseNow()
	if c.bigFrames.Load() {
		// The big frames are garbage now: give their memory back to the
		// OS, so one huge frame costs no lasting RSS.
		debug.FreeOSMemory()
	}
	if c.interruptOnDisconnect.Load() {
		c.interruptTurns()
	}
	c.log.Debug("disconnected")
}

func (c *conn) readLoop() {
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			switch {
			case websocket.CloseStatus(err) != -1, errors.Is(err, context.Canceled):
			default:
				c.log.Debug("read", "err", err)
			}
			return
		}
		if typ != websocket.MessageText {
			c.enqueue(encodeError(nil, &WireError{Code: CodeInvalidRequest, Message: "invalid request: binary frames are not accepted; send JSON text frames"}))
			continue
		}
		big := len(data) >= bigFrame
		if big {
			c.bigFrames.Store(true)
		}
		items, batch := parseFrame(data)
		data = nil
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		c.wg.Go(func() {
			defer func() { <-c.slots }()
			c.handleFrame(items, batch)
			if big {
				c.s.releaseMemory()
			}
		})
	}
}

// handleFrame runs the requests of one frame (concurrently for a batch) and
// sends the response(s).
func (c *conn) handleFrame(items []parsed, batch bool) {
	if !batch {
		b, after := c.handleItem(items[0])
		if b != nil {
			c.enqueue(b)
		}
		if after != nil {
			after()
		}
		return
	}
	outs := make([][]byte, len(items))
	afters := make([]func(), len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Go(func() { outs[i], afters[i] = c.handleItem(it) })
	}
	wg.Wait()
	var arr []json.RawMessage
	for _, b := range outs {
		if b != nil {
			arr = append(arr, b)
		}
	}
	if len(arr) > 0 {
		b, err := json.Marshal(arr)
		if err == nil {
			c.enqueue(b)
		}
	}
	for _, f := range afters {
		if f != nil {
			f()
		}
	}
}

// handleItem returns the encoded response (nil for a notification) and what
// to run once it is queued.
func (c *conn) handleItem(it parsed) ([]byte, func()) {
	if it.err != nil {
		return encodeError(it.id, it.err), nil
	}
	req := it.req
	result, err := c.call(req)
	var after func()
	if f, ok := result.(followUp); ok {
		result, after = f.result, f.after
	}
	if req.isNotification() {
		return nil, after
	}
	if err != nil {
		we := wireError(err)
		if we.Code == CodeInternal {
			c.log.Warn("request failed", "method", req.Method, "err", err)
		}
		return encodeError(req.ID, we), nil
	}
	b, err := encodeResult(req.ID, result)
	if err != nil {
		c.log.Error("encode result", "method", req.Method, "err", err)
		return encodeError(req.ID, &WireError{Code: CodeInternal, Message: "internal error: encode result: " + err.Error()}), nil
	}
	return b, after
}

// call routes one request.
func (c *conn) call(req *request) (any, error) {
	h, ok := c.s.routes[req.Method]
	if !ok {
		return nil, &WireError{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
	}
	if req.Method != "initialize" && !c.initialized.Load() {
		return nil, &WireError{Code: CodeNotInitialized, Message: "not initialized: call initialize first"}
	}
	return h(c.ctx, c, req.Params)
}

// followUp is a handler result with work to run after the response is queued
// (session.subscribe starts its replay only after its result is sent).
type followUp struct {
	result any
	after  func()
}

// enqueue queues a frame, waiting while the queue is full; it gives up when
// the connection ends. The stall watch bounds the wait: a connection whose
// socket takes nothing for the write timeout is closed.
func (c *conn) enqueue(b []byte) bool {
	return c.q.push(c.ctx, b)
}

// enqueueNoWait queues a frame without waiting: a connection whose queue is
// full is closed ("fell behind"). Broadcasts use it, so that one slow
// connection never holds up the others.
func (c *conn) enqueueNoWait(b []byte) bool {
	if c.ctx.Err() != nil {
		return false
	}
	if c.q.tryPushNoWait(b) {
		return true
	}
	c.log.Info("client fell behind: its send queue is full; closing")
	c.cancel()
	return false
}

// notifyNoWait is notify for broadcasts (enqueueNoWait).
func (c *conn) notifyNoWait(method string, params any) bool {
	b, err := encodeNotification(method, params)
	if err != nil {
		c.log.Error("encode notification", "method", method, "err", err)
		return false
	}
	return c.enqueueNoWait(b)
}

// notify queues a notification.
func (c *conn) notify(method string, params any) bool {
	b, err := encodeNotification(method, params)
	if err != nil {
		c.log.Error("encode notification", "method", method, "err", err)
		return false
	}
	return c.enqueue(b)
}

func (c *conn) writeLoop() {
	defer c.watch.stop()
	closeNow := func(req closeReq) {
		// Flush what is queued (a shutdown's answer), then close.
		for b := c.q.take(); b != nil; b = c.q.take() {
			if !c.write(b) {
				return
			}
		}
		_ = c.ws.Close(req.code, req.reason) // best effort: the peer may be gone
		c.cancel()
	}
	for {
		select {
		case req := <-c.closeCh:
			closeNow(req)
			return
		default:
		}
		if b := c.q.take(); b != nil {
			if !c.write(b) {
				return
			}
			continue
		}
		select {
		case <-c.q.ready:
		case req := <-c.closeCh:
			closeNow(req)
			return
		case <-c.ctx.Done():
			return
		}
	}
}

// write sends one frame. It has no deadline of its own: the stall watch
// closes the connection when the socket takes no byte for the write
// timeout, so a slow but steady reader is never cut off mid-frame.
func (c *conn) write(b []byte) bool {
	c.watch.begin()
	err := c.ws.Write(c.ctx, websocket.MessageText, b)
	c.watch.end()
	if err != nil {
		c.cancel()
		return false
	}
	return true
}

type closeReq struct {
	code   websocket.StatusCode
	reason string
}

// close asks the writer to flush the queue and close the socket with a code
// and reason; the reader then sees the peer's answer and serve cleans up.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() { c.closeCh <- closeReq{code, reason} })
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
	for _, id := range ids {
		if h := c.s.loadedHost(id); h != nil {
			h.interruptAll()
		}
	}
}

// releaseMemory gives freed heap back to the OS after a big frame was
// handled, at most once a second across the server (it runs a GC).
func (s *Server) releaseMemory() {
	now := time.Now().UnixNano()
	last := s.lastRelease.Load()
	if now-last < int64(time.Second) || !s.lastRelease.CompareAndSwap(last, now) {
		return
	}
	debug.FreeOSMemory()
}
