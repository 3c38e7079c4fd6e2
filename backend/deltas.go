package backend

import (
	"strings"
	"sync"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// maxCoalesced bounds the text of one coalesced delta event; past it the
// next delta starts a new event (and waits for queue room like any other).
const maxCoalesced = 64 << 10

// deltaCoalescer merges a stream's deltas into as few stored events as the
// store allows, without delaying any: a delta becomes a sealed event
// (store.EnqueueSealed) queued at once, and the deltas that arrive before
// the writer reaches it join it. So while one batch commits, the next
// delta event collects everything the model sends meanwhile: one row, one
// frame, one encoding for many deltas, and the store is never more than a
// commit behind the model. Every delta is still stored before it is sent
// (the frame is the committed event), and a replay gives the same text.
//
// Only assistant and reasoning deltas of the same turn and model response
// are merged. Any other event of the session cuts the open delta first, so
// nothing recorded after an event is stored before it.
type deltaCoalescer struct {
	mu   sync.Mutex // guards open and every openDelta's text and sealed
	open *openDelta // the queued delta event deltas may still join; nil when none
}

// openDelta is one queued delta event.
type openDelta struct {
	c      *deltaCoalescer
	ev     engine.Event // the first delta: type, turn, reqId
	text   strings.Builder
	sealed bool // the writer took it: deltas may no longer join
}

// add records ev if it is a delta and reports whether it did; enqueue
// queues a new sealed event (called without the lock).
func (c *deltaCoalescer) add(ev engine.Event, enqueue func(seal func() store.EventInput)) bool {
	if ev.Type != protocol.EventAssistantDelta && ev.Type != protocol.EventReasoningDelta {
		return false
	}
	d, ok := ev.Data.(protocol.DeltaData)
	if !ok {
		return false
	}
	c.mu.Lock()
	if od := c.open; od != nil && !od.sealed && od.ev.Type == ev.Type && od.text.Len() < maxCoalesced {
		if prev := od.ev.Data.(protocol.DeltaData); prev.TaskID == d.TaskID && prev.ReqID == d.ReqID {
			od.text.WriteString(d.Text)
			c.mu.Unlock()
			return true
		}
	}
	od := &openDelta{c: c, ev: ev}
	od.text.WriteString(d.Text)
	c.open = od
	c.mu.Unlock()
	enqueue(od.seal)
	return true
}

// cut closes the open delta event to later deltas: call it before
// recording any other event of the session.
func (c *deltaCoalescer) cut() {
	c.mu.Lock()
	c.open = nil
	c.mu.Unlock()
}

// seal runs on the store's writer goroutine when it reaches the event.
func (od *openDelta) seal() store.EventInput {
	od.c.mu.Lock()
	od.sealed = true
	if od.c.open == od {
		od.c.open = nil
	}
	d := od.ev.Data.(protocol.DeltaData)
	d.Text = od.text.String()
	od.c.mu.Unlock()
	in, err := durableInput(engine.Event{Type: od.ev.Type, Data: d}, nil, "") // a delta moves no state
	if err != nil {
		return store.EventInput{} // refused by the store: logged by the done callback
	}
	return in
}
