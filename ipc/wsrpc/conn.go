package wsrpc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// Conn is one client connection: a reader (Serve), a writer goroutine fed by
// the bounded out queue, and a goroutine per in-flight request. Its context
// ends when the connection ends; whoever serves it attaches their own
// per-connection state with SetState and their cleanup with OnEnd.
type Conn struct {
	e      *Endpoint
	ws     *websocket.Conn // nil for a Detached connection
	log    *slog.Logger
	ctx    context.Context // ends when the connection ends
	cancel context.CancelFunc
	q      *sendQueue    // bounded in bytes; drained by writeLoop
	watch  *stallWatch   // closes the connection when its socket stalls
	slots  chan struct{} // bounds in-flight requests
	wg     sync.WaitGroup
	state  any    // set before Serve (SetState); read-only after
	onEnd  func() // set before Serve (OnEnd)
	// unwatch detaches the stall watch from the socket's progress.
	unwatch func()

	arrivals    uint64      // requests read so far; only the reader touches it
	bigFrames   atomic.Bool // a large frame (over smallFrame bytes) was read
	initialized atomic.Bool
	closeOnce   sync.Once
	closeCh     chan closeReq // capacity 1; the writer closes the socket
}

var connSeq atomic.Uint64

func newConn(e *Endpoint, ws *websocket.Conn) *Conn {
	ctx, cancel := context.WithCancel(e.Context)
	c := &Conn{
		e:       e,
		ws:      ws,
		log:     e.Log.With("conn", connSeq.Add(1)),
		ctx:     ctx,
		cancel:  cancel,
		q:       newSendQueue(e.SendQueueBytes),
		closeCh: make(chan closeReq, 1),
		slots:   make(chan struct{}, MaxInFlight),
	}
	c.watch = newStallWatch(e.WriteTimeout, func() {
		c.log.Info("client fell behind: its socket took nothing for the write timeout; closing", "timeout", e.WriteTimeout)
		c.cancel()
	})
	return c
}

// SetState attaches the server's per-connection state; call it before
// Serve.
func (c *Conn) SetState(v any) { c.state = v }

// State is what SetState attached.
func (c *Conn) State() any { return c.state }

// OnEnd sets what runs once the connection ended and every goroutine of it
// (requests, Go) returned; call it before Serve.
func (c *Conn) OnEnd(f func()) { c.onEnd = f }

// Context ends when the connection ends.
func (c *Conn) Context() context.Context { return c.ctx }

// Log is the connection's logger.
func (c *Conn) Log() *slog.Logger { return c.log }

// Go runs f on a goroutine the connection waits for before it ends; f must
// return once Context ends. Call it only from a request's handler or from
// another goroutine started by Go (the connection is then still serving).
func (c *Conn) Go(f func()) { c.wg.Go(f) }

// Initialized reports whether the Gate method was called (MarkInitialized).
func (c *Conn) Initialized() bool { return c.initialized.Load() }

// MarkInitialized opens the gate: every method is routed from now on.
func (c *Conn) MarkInitialized() { c.initialized.Store(true) }

// Serve reads frames until the connection ends, then cleans up: it cancels
// the connection's requests and goroutines, waits for them, closes the
// socket and runs OnEnd.
func (c *Conn) Serve() {
	c.log.Debug("connected")
	c.wg.Go(c.writeLoop)
	c.readLoop()
	c.closeOnce.Do(func() {}) // no close request after the end
	c.cancel()
	c.wg.Wait()
	c.ws.CloseNow()
	if c.unwatch != nil {
		c.unwatch()
	}
	if c.bigFrames.Load() {
		// The big frames are garbage now: give their memory back to the
		// OS, so one huge frame costs no lasting RSS.
		debug.FreeOSMemory()
	}
	if c.onEnd != nil {
		c.onEnd()
	}
	c.log.Debug("disconnected")
}

func (c *Conn) readLoop() {
	for {
		f, err := c.readFrame()
		if err != nil {
			switch {
			case websocket.CloseStatus(err) != -1, errors.Is(err, context.Canceled):
			default:
				c.log.Debug("read", "err", err)
			}
			return
		}
		if f.typ != websocket.MessageText {
			c.done(f)
			c.Enqueue(encodeError(nil, &WireError{Code: CodeInvalidRequest, Message: "invalid request: binary frames are not accepted; send JSON text frames"}))
			continue
		}
		if f.large() {
			c.bigFrames.Store(true)
		}
		items, batch := parseFrame(f.data)
		for _, it := range items {
			if it.req != nil {
				c.arrivals++
				it.req.arrival = c.arrivals
			}
		}
		if !batch && items[0].req != nil && c.e.Ordered[items[0].req.Method] {
			// An ordered method runs here, before the next frame is read:
			// the requests of one connection take effect in the order they
			// were sent (keystrokes, turns, steering).
			c.handleFrame(items, batch)
			c.done(f)
			continue
		}
		select {
		case c.slots <- struct{}{}:
		case <-c.ctx.Done():
			c.done(f)
			return
		}
		c.wg.Go(func() {
			defer func() { <-c.slots }()
			c.handleFrame(items, batch)
			c.done(f)
		})
	}
}

// done ends a frame's life once it was handled: a large frame's buffer is
// freed (its pages go back to the OS) and so is the heap its handling
// left behind (ReleaseMemory). Nothing may read the frame after done.
func (c *Conn) done(f frame) {
	if !f.large() {
		return
	}
	c.e.slots().put(f.buf, len(f.data))
	c.e.ReleaseMemory()
}

// handleFrame runs the requests of one frame (concurrently for a batch) and
// sends the response(s).
func (c *Conn) handleFrame(items []parsed, batch bool) {
	if !batch {
		b, after := c.handleItem(items[0])
		if b != nil {
			c.Enqueue(b)
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
			c.Enqueue(b)
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
func (c *Conn) handleItem(it parsed) ([]byte, func()) {
	if it.err != nil {
		return encodeError(it.id, it.err), nil
	}
	req := it.req
	result, err := c.call(req)
	var after func()
	if f, ok := result.(FollowUp); ok {
		result, after = f.Result, f.After
	}
	if req.isNotification() {
		return nil, after
	}
	if err != nil {
		we := WireErrorOf(err, c.e.ErrorCodes)
		if we.Code == CodeInternal {
			c.log.Warn("request failed", "method", req.Method, "err", err)
		}
		return encodeError(req.ID, c.e.withMessage(we)), nil
	}
	b, err := encodeResult(req.ID, result)
	if err != nil {
		c.log.Error("encode result", "method", req.Method, "err", err)
		return encodeError(req.ID, &WireError{Code: CodeInternal, Message: "internal error: encode result: " + err.Error()}), nil
	}
	return b, after
}

// call routes one request.
func (c *Conn) call(req *request) (any, error) {
	h, ok := c.e.Methods[req.Method]
	if !ok {
		return nil, &WireError{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
	}
	if c.e.Gate != "" && req.Method != c.e.Gate && !c.initialized.Load() {
		return nil, &WireError{Code: CodeNotInitialized, Message: "not initialized: call " + c.e.Gate + " first"}
	}
	return h(context.WithValue(c.ctx, arrivalKey{}, req.arrival), c, req.Params)
}

type arrivalKey struct{}

// Arrival is the place of the request whose handler got ctx among the
// requests its connection read, from 1, in the order they were read
// (the requests of a batch in the batch's order), whichever handler runs
// first: "newer" for a method where a later call replaces an earlier one.
// It is 0 outside a handler.
func Arrival(ctx context.Context) uint64 {
	n, _ := ctx.Value(arrivalKey{}).(uint64)
	return n
}

// FollowUp is a handler result with work to run after the response is
// queued (session.subscribe starts its replay only after its result is
// sent).
type FollowUp struct {
	Result any
	After  func()
}

// Enqueue queues a frame, waiting while the queue is full; it gives up when
// the connection ends. The stall watch bounds the wait: a connection whose
// socket takes nothing for the write timeout is closed.
func (c *Conn) Enqueue(b []byte) bool {
	return c.q.push(c.ctx, b)
}

// EnqueueUntil is Enqueue that gives up when ctx ends, which must be
// derived from Context (a stream that waits for room only while it lives).
func (c *Conn) EnqueueUntil(ctx context.Context, b []byte) bool {
	return c.q.push(ctx, b)
}

// EnqueueNoWait queues a frame without waiting: a connection whose queue is
// full is closed ("fell behind"). Broadcasts use it, so that one slow
// connection never holds up the others.
func (c *Conn) EnqueueNoWait(b []byte) bool {
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

// NotifyNoWait is Notify for broadcasts (EnqueueNoWait).
func (c *Conn) NotifyNoWait(method string, params any) bool {
	b, err := EncodeNotification(method, params)
	if err != nil {
		c.log.Error("encode notification", "method", method, "err", err)
		return false
	}
	return c.EnqueueNoWait(b)
}

// Notify queues a notification (waiting for room, like Enqueue).
func (c *Conn) Notify(method string, params any) bool {
	b, err := EncodeNotification(method, params)
	if err != nil {
		c.log.Error("encode notification", "method", method, "err", err)
		return false
	}
	return c.Enqueue(b)
}

func (c *Conn) writeLoop() {
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
func (c *Conn) write(b []byte) bool {
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

// Close asks the writer to flush the queue and close the socket with a code
// and reason; the reader then sees the peer's answer and Serve cleans up.
func (c *Conn) Close(code StatusCode, reason string) {
	c.closeOnce.Do(func() { c.closeCh <- closeReq{code, reason} })
}
