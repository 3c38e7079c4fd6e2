package backend

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/terminal"
)

// Terminal streaming: terminal.subscribe registers a termSub, the
// terminal.Subscriber of one (connection, terminal) pair. The manager calls
// it from the subscription's own goroutine; it turns each Output into
// terminal.output frames queued on the connection. Queuing may wait while the
// connection's queue is full: only that subscription waits, the PTY reader
// keeps filling the ring, and a subscription that lags more than the
// manager's SubscriberBuffer is dropped (terminal.dropped) instead.
//
// Memory: a frame carries at most termFrameBytes(SendQueueBytes) bytes of
// output, and the connection's queue is bounded in bytes, so it holds at
// most about SendQueueBytes of frames whatever the terminals produce; one
// frame is at most an eighth of the queue, so one terminal cannot starve
// the others of it.
//
// Ordering: a termSub sends nothing before the subscribe response is queued
// (ready). Re-subscribing or unsubscribing cancels the old termSub and then
// takes its send lock, so no frame of the old subscription follows the
// response of the new call. A connection's termSubs end when it closes (a
// watcher goroutine owned by the connection's WaitGroup).

// termFrameBytes is the largest output chunk of one terminal.output frame
// for a send queue of queueBytes (256 KiB for the default 16 MiB; base64
// makes a frame a third larger).
func termFrameBytes(queueBytes int) int {
	return min(max(queueBytes/8*3/4, 4<<10), 256<<10)
}

// termSub delivers one terminal to one connection.
type termSub struct {
	s         *Backend
	c         Client
	projectID string
	id        string
	idJSON    []byte // the terminal id as a JSON string
	chunk     int
	ctx       context.Context // ends on unsubscribe, re-subscribe or disconnect
	cancel    context.CancelFunc
	ready     chan struct{} // closed once the subscribe response is queued
	readyOnce sync.Once
	unsub     func() // the manager's unsubscribe; set before the termSub is registered

	sendMu sync.Mutex // held while a frame is queued; the fence of stop
}

var _ terminal.Subscriber = (*termSub)(nil)

func newTermSub(s *Backend, c Client, projectID, id string) *termSub {
	ctx, cancel := context.WithCancel(c.Context())
	return &termSub{
		s: s, c: c, projectID: projectID, id: id,
		idJSON: AppendJSONString(nil, id),
		chunk:  termFrameBytes(s.opts.SendQueueBytes),
		ctx:    ctx, cancel: cancel,
		ready: make(chan struct{}),
	}
}

func (ts *termSub) markReady() { ts.readyOnce.Do(func() { close(ts.ready) }) }

// send queues one frame; false when the subscription or connection ended.
func (ts *termSub) send(frame []byte) bool {
	select {
	case <-ts.ready:
	case <-ts.ctx.Done():
		return false
	}
	ts.sendMu.Lock()
	defer ts.sendMu.Unlock()
	if ts.ctx.Err() != nil {
		return false
	}
	return ts.c.EnqueueUntil(ts.ctx, frame)
}

// stop ends the subscription and returns once it can send no more frames.
func (ts *termSub) stop() {
	ts.cancel()
	if ts.unsub != nil {
		ts.unsub()
	}
	// An empty critical section as a fence: a send in progress finishes
	// before stop returns, and none starts after (ctx is cancelled).
	ts.sendMu.Lock()
	//lint:ignore SA2001 the empty critical section is the fence
	ts.sendMu.Unlock()
}

// Output sends a batch as terminal.output frames of at most chunk bytes.
func (ts *termSub) Output(o terminal.Output) bool {
	for off := 0; off < len(o.Data); off += ts.chunk {
		end := min(off+ts.chunk, len(o.Data))
		if !ts.send(ts.s.termOutput.frame(base64.StdEncoding.EncodedLen(end-off)+len(ts.idJSON)+40, func(b []byte) []byte {
			return appendTerminalOutputParams(b, ts.idJSON, o.Seq+int64(off), o.Data[off:end])
		})) {
			return false
		}
	}
	return true
}

// Exit sends terminal.exit; the subscription is over.
func (ts *termSub) Exit(e terminal.Exit) {
	b, err := ts.s.notificationFrame("terminal.exit", protocol.TerminalExit{TerminalID: e.TerminalID, ExitCode: e.ExitCode})
	if err == nil {
		ts.send(b)
	}
	ts.s.termSubs.remove(ts.c, ts.id, ts)
	ts.cancel()
}

// Dropped sends terminal.dropped; the subscription is over.
func (ts *termSub) Dropped(id string, firstMissed int64) {
	ts.c.Log().Info("terminal subscriber dropped", "terminal", id, "seq", firstMissed)
	b, err := ts.s.notificationFrame("terminal.dropped", protocol.TerminalDropped{TerminalID: id, Seq: firstMissed})
	if err == nil {
		ts.send(b)
	}
	ts.s.termSubs.remove(ts.c, ts.id, ts)
	ts.cancel()
}

// notificationFrame is a notification's frame in the transport's envelope.
func (b *Backend) notificationFrame(method string, params any) ([]byte, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return newEnvelope(b.opts.Envelope, method).frame(len(p), func(buf []byte) []byte { return append(buf, p...) }), nil
}

// appendTerminalOutputParams appends the params of a terminal.output
// notification by hand (the streaming hot path); it is the JSON
// encoding/json would produce for terminal.Output.
func appendTerminalOutputParams(b, idJSON []byte, seq int64, data []byte) []byte {
	b = append(b, `{"terminalId":`...)
	b = append(b, idJSON...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, `"}`...)
}

// termRegistry holds the terminal subscriptions of every connection.
type termRegistry struct {
	mu     sync.Mutex
	byConn map[Client]map[string]*termSub // by terminal id
}

// set installs ts as c's subscription of its terminal and returns the one
// it replaces. The first subscription of a connection starts the watcher
// that ends them all when the connection closes.
func (r *termRegistry) set(ts *termSub) (old *termSub, err error) {
	c := ts.c
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.Context().Err() != nil {
		return nil, fmt.Errorf("terminal.subscribe: %w: connection closing", ErrClosed)
	}
	if r.byConn == nil {
		r.byConn = map[Client]map[string]*termSub{}
	}
	subs := r.byConn[c]
	if subs == nil {
		subs = map[string]*termSub{}
		r.byConn[c] = subs
		// The handler calling set runs in the connection's WaitGroup, so
		// the counter is positive.
		c.Go(func() {
			<-c.Context().Done()
			r.dropConn(c)
		})
	}
	old = subs[ts.id]
	subs[ts.id] = ts
	return old, nil
}

// remove forgets c's subscription of terminal id; when want is not nil only
// if it is that one. It returns what it removed.
func (r *termRegistry) remove(c Client, id string, want *termSub) *termSub {
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := r.byConn[c][id]
	if ts == nil || (want != nil && ts != want) {
		return nil
	}
	delete(r.byConn[c], id)
	return ts
}

// peek returns c's subscription of terminal id.
func (r *termRegistry) peek(c Client, id string) *termSub {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byConn[c][id]
}

// dropConn ends every terminal subscription of a closed connection.
func (r *termRegistry) dropConn(c Client) {
	r.mu.Lock()
	subs := r.byConn[c]
	delete(r.byConn, c)
	r.mu.Unlock()
	for _, ts := range subs {
		ts.stop()
	}
}

// size returns how many terminal subscriptions are registered.
func (r *termRegistry) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, subs := range r.byConn {
		n += len(subs)
	}
	return n
}

// SubscribeTerminal streams the terminal's output after afterSeq to the
// client (terminal.output, terminal.exit, terminal.dropped), ending the
// client's previous subscription of it first. The stream sends nothing
// before ready is called (after the answer is queued).
func (b *Backend) SubscribeTerminal(ctx context.Context, c Client, p protocol.TerminalSubscribeParams) (res protocol.TerminalSubscribeResult, ready func(), err error) {
	if p.AfterSeq < 0 {
		return res, nil, protocol.InvalidField("afterSeq", "must not be negative")
	}
	m, err := b.terminals()
	if err != nil {
		return res, nil, err
	}
	info, err := m.Get(p.ProjectID, p.TerminalID)
	if err != nil {
		return res, nil, fmt.Errorf("terminal.subscribe: %w", err)
	}
	ts := newTermSub(b, c, p.ProjectID, p.TerminalID)
	unsub, err := m.Subscribe(p.ProjectID, p.TerminalID, p.AfterSeq, ts)
	if err != nil {
		ts.cancel()
		return res, nil, fmt.Errorf("terminal.subscribe: %w", err)
	}
	ts.unsub = unsub
	old, err := b.termSubs.set(ts)
	if err != nil {
		ts.stop()
		return res, nil, err
	}
	if old != nil {
		old.stop() // its last frame is queued before our response
	}
	return protocol.TerminalSubscribeResult{LastSeq: info.LastSeq, Alive: info.Alive, ExitCode: info.ExitCode}, ts.markReady, nil
}

func (b *Backend) UnsubscribeTerminal(ctx context.Context, c Client, p protocol.TerminalRef) (protocol.UnsubscribeResult, error) {
	m, err := b.terminals()
	if err != nil {
		return protocol.UnsubscribeResult{}, err
	}
	ts := b.termSubs.peek(c, p.TerminalID)
	if ts == nil || ts.projectID != p.ProjectID {
		// Not subscribed here: an existing terminal answers false, any
		// other (or another project's) is not found.
		if _, err := m.Get(p.ProjectID, p.TerminalID); err != nil {
			return protocol.UnsubscribeResult{}, fmt.Errorf("terminal.unsubscribe: %w", err)
		}
		return protocol.UnsubscribeResult{Unsubscribed: false}, nil
	}
	removed := b.termSubs.remove(c, p.TerminalID, ts)
	if removed != nil {
		removed.stop()
	}
	return protocol.UnsubscribeResult{Unsubscribed: removed != nil}, nil
}
