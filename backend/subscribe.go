package backend

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// replayPage is how many stored events a replay reads per query.
const replayPage = 512

// liveEvent is a committed event encoded once for all subscribers.
type liveEvent struct {
	seq   int64
	frame []byte
}

// Subscription streams one session to one connection (a Sink). The session's
// broadcast pushes into the live buffer without blocking; pump (owned by the
// connection's WaitGroup) replays stored events, then drains the buffer. The
// buffer is a slice that grows only while the subscriber lags (up to
// Options.SubscriberBuffer events), so an idle Subscription costs nothing.
type Subscription struct {
	h      *Session
	c      Sink
	max    int             // bound of live
	wake   chan struct{}   // capacity 1: live has events
	ctx    context.Context // ends on unsubscribe, re-subscribe or disconnect
	cancel context.CancelFunc

	who  protocol.PresenceClient // the connection, for session.presence
	join int64                   // join order among the session's subscriptions

	mu    sync.Mutex  // guards live, spare, pres
	live  []liveEvent // committed events not yet taken by pump
	spare []liveEvent
	pres  []protocol.PresenceClient // a session.presence not yet sent (nil: none)

	sent      atomic.Int64  // last seq handed to the connection's queue
	ready     chan struct{} // closed once the subscribe answer is queued
	readyOnce sync.Once
	done      chan struct{} // closed when pump returns
	dropOnce  sync.Once
	dropped   chan struct{} // closed when the session dropped this subscriber
	reason    string        // why it was dropped; written before dropped is closed
}

func newSubscription(h *Session, c Sink) *Subscription {
	ctx, cancel := context.WithCancel(c.Context())
	return &Subscription{
		h:       h,
		c:       c,
		max:     h.s.opts.SubscriberBuffer,
		wake:    make(chan struct{}, 1),
		ctx:     ctx,
		cancel:  cancel,
		dropped: make(chan struct{}),
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// MarkReady lets Pump send: the subscribe answer is queued.
func (sub *Subscription) MarkReady() { sub.readyOnce.Do(func() { close(sub.ready) }) }

// push offers a live event; false means the buffer is full.
func (sub *Subscription) push(ev liveEvent) bool {
	sub.mu.Lock()
	if len(sub.live) >= sub.max {
		sub.mu.Unlock()
		return false
	}
	sub.live = append(sub.live, ev)
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
	return true
}

// take returns the buffered live events; the caller owns them until its
// next take (the slice is then reused as the buffer).
func (sub *Subscription) take() []liveEvent {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	got := sub.live
	next := sub.spare // what the previous take returned, now consumed
	clear(next)       // keep no frame alive
	if cap(next) > 1024 {
		next = nil // give a burst's memory back
	}
	sub.live, sub.spare = next[:0], got
	return got
}

// setPresence queues a session.presence with clients for pump (only the
// latest one is sent).
func (sub *Subscription) setPresence(clients []protocol.PresenceClient) {
	sub.mu.Lock()
	sub.pres = clients
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

func (sub *Subscription) takePresence() []protocol.PresenceClient {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	p := sub.pres
	sub.pres = nil
	return p
}

// drop marks the subscriber dropped (called under the session lock).
func (sub *Subscription) drop(reason string) {
	sub.dropOnce.Do(func() {
		sub.reason = reason
		close(sub.dropped)
	})
}

// Pump sends stored events with afterSeq < seq <= upTo, then live events
// with seq > upTo, in order, each once. It returns when the subscription
// ends (Cancel, the sink's end, or a drop); run it on a goroutine the sink
// waits for.
func (sub *Subscription) Pump(afterSeq, upTo int64) {
	defer close(sub.done)
	defer sub.h.removeSub(sub)
	defer sub.cancel()
	select {
	case <-sub.ready: // nothing goes out before the subscribe answer
	case <-sub.ctx.Done():
		return
	}
	last := afterSeq
	sub.sent.Store(afterSeq)
	st := sub.h.s.opts.Store
	for last < upTo {
		evs, err := st.EventsAfter(sub.ctx, sub.h.id, last, replayPage)
		if err != nil {
			if sub.ctx.Err() == nil {
				sub.c.Log().Warn("replay", "session", sub.h.id, "err", err)
				sub.notifyDropped(last, "replay failed: "+err.Error())
			}
			return
		}
		progressed := false
		for _, ev := range evs {
			if ev.Seq > upTo {
				break
			}
			if !sub.send(ev) {
				return
			}
			last, progressed = ev.Seq, true
			sub.sent.Store(last)
		}
		if !progressed {
			break // nothing more up to upTo (never loop on a short store)
		}
	}
	for {
		select {
		case <-sub.wake:
			if pres := sub.takePresence(); pres != nil {
				sub.c.Notify("session.presence", protocol.SessionPresence{SessionID: sub.h.id, Clients: pres})
			}
			for _, le := range sub.take() {
				if le.seq <= last {
					continue
				}
				if !sub.enqueue(le.frame) {
					return
				}
				last = le.seq
				sub.sent.Store(last)
			}
		case <-sub.dropped:
			sub.notifyDropped(last, sub.reason)
			return
		case <-sub.ctx.Done():
			return
		}
	}
}

func (sub *Subscription) send(ev store.Event) bool {
	return sub.enqueue(sub.h.s.eventFrame(ev))
}

// enqueue queues a frame on the connection, waiting for room until the
// Subscription ends (not only the connection): a fence never waits on a
// pump stuck behind a full queue.
func (sub *Subscription) enqueue(b []byte) bool {
	return sub.c.EnqueueUntil(sub.ctx, b)
}

func (sub *Subscription) notifyDropped(last int64, reason string) {
	sub.c.Log().Info("subscriber dropped", "session", sub.h.id, "lastSeq", last, "reason", reason)
	sub.c.Notify("session.dropped", protocol.SessionDropped{SessionID: sub.h.id, LastSeq: last, Reason: reason})
}

// Subscribe makes a subscription of the session for sink that delivers
// what follows afterSeq, and registers it at the last committed seq: it
// returns that seq (upTo) and whether a turn runs. Registering and reading
// the seq happen under the session lock, so every event after it reaches
// the live buffer. Nothing is sent before MarkReady; Pump(afterSeq, upTo)
// sends.
// who is the connection as session.presence lists it.
func (h *Session) Subscribe(sink Sink, afterSeq int64, who protocol.PresenceClient) (sub *Subscription, upTo int64, running bool) {
	sub = newSubscription(h, sink)
	sub.who = who
	sub.sent.Store(afterSeq)
	upTo, running = h.subscribe(sub)
	return sub, upTo, running
}

func (h *Session) subscribe(sub *Subscription) (upTo int64, running bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subMu.Lock()
	defer h.subMu.Unlock()
	h.joins++
	sub.join = h.joins
	h.subs[sub] = struct{}{}
	h.presenceChangedLocked(sub)
	return h.committed, h.state.Busy()
}

func (h *Session) removeSub(sub *Subscription) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	if _, ok := h.subs[sub]; !ok {
		return
	}
	delete(h.subs, sub)
	h.presenceChangedLocked(nil)
}

// Clients lists the connections subscribed to the session, in the order
// they joined, each once.
func (h *Session) Clients() []protocol.PresenceClient {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	return h.clientsLocked()
}

func (h *Session) clientsLocked() []protocol.PresenceClient {
	subs := make([]*Subscription, 0, len(h.subs))
	for sub := range h.subs {
		subs = append(subs, sub)
	}
	slices.SortFunc(subs, func(a, b *Subscription) int { return cmp.Compare(a.join, b.join) })
	out := make([]protocol.PresenceClient, 0, len(subs))
	seen := make(map[string]bool, len(subs))
	for _, sub := range subs {
		if seen[sub.who.ConnectionID] {
			continue // a connection's old and new subscription during a re-subscribe
		}
		seen[sub.who.ConnectionID] = true
		out = append(out, sub.who)
	}
	return out
}

// presenceChangedLocked queues a session.presence for every subscriber but
// joined (it gets the list in its subscribe answer) when the list changed.
func (h *Session) presenceChangedLocked(joined *Subscription) {
	now := h.clientsLocked()
	if slices.Equal(now, h.presence) {
		return
	}
	h.presence = now
	for sub := range h.subs {
		if sub != joined {
			sub.setPresence(now)
		}
	}
}

// broadcast is called by the store after an event of this session was
// committed, in seq order. It never blocks: a subscriber whose buffer is
// full is dropped.
func (h *Session) broadcast(ev store.Event) {
	frame := h.s.eventFrame(ev)
	h.subMu.Lock()
	defer h.subMu.Unlock()
	if ev.Seq > h.committed {
		h.committed = ev.Seq
	}
	le := liveEvent{seq: ev.Seq, frame: frame}
	for sub := range h.subs {
		if !sub.push(le) {
			delete(h.subs, sub)
			sub.drop("fell behind")
			h.presenceChangedLocked(nil)
		}
	}
}

// dropSubs ends every Subscription of the session (deleted or closed).
func (h *Session) dropSubs(reason string) {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	for sub := range h.subs {
		delete(h.subs, sub)
		sub.drop(reason)
	}
}

// SessionID is the id of the subscribed session.
func (sub *Subscription) SessionID() string { return sub.h.id }

// Cancel ends the subscription; Done is closed once Pump returned.
func (sub *Subscription) Cancel() { sub.cancel() }

// Done is closed when Pump returns.
func (sub *Subscription) Done() <-chan struct{} { return sub.done }

// Dropped is closed when the session dropped the subscriber (it fell
// behind, or the session closed).
func (sub *Subscription) Dropped() <-chan struct{} { return sub.dropped }

// Sent is the last seq handed to the sink's queue.
func (sub *Subscription) Sent() int64 { return sub.sent.Load() }

// Subscribed reports whether sub is still registered on the session.
func (h *Session) Subscribed(sub *Subscription) bool {
	h.subMu.Lock()
	defer h.subMu.Unlock()
	_, ok := h.subs[sub]
	return ok
}
