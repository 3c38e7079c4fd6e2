package terminal

import (
	"sync"
	"time"
)

// Output is a batch of a terminal's output. Seq is the stream offset of
// Data[0]; the subscriber owns Data.
type Output struct {
	TerminalID string `json:"terminalId"`
	Seq        int64  `json:"seq"`
	Data       []byte `json:"data"`
}

// Exit reports that a terminal's process exited, after all its output.
type Exit struct {
	TerminalID string `json:"terminalId"`
	ExitCode   int    `json:"exitCode"`
}

// Subscriber receives one subscription's events, from one goroutine, in
// order. Exit and Dropped end the subscription.
type Subscriber interface {
	// Output delivers a batch; false means the subscriber is gone and ends
	// the subscription.
	Output(Output) bool
	// Exit: the process exited and every byte of output was delivered.
	Exit(Exit)
	// Dropped: the subscriber fell behind and was unsubscribed; the stream
	// from firstMissedSeq on was not delivered. Subscribe again with
	// afterSeq = firstMissedSeq to continue (from the oldest byte still held,
	// if the ring moved past it).
	Dropped(terminalID string, firstMissedSeq int64)
}

// subscription delivers one terminal's stream to one Subscriber.
type subscription struct {
	t      *terminal
	sub    Subscriber
	cursor int64         // next offset to deliver; written by run, guarded by t.mu
	wake   chan struct{} // cap 1: the ring grew or the terminal finished
	stop   chan struct{} // closed by unsubscribe
	once   sync.Once
}

func (s *subscription) unsubscribe() { s.once.Do(func() { close(s.stop) }) }

// step is what next found.
type step int

const (
	stepIdle    step = iota // nothing to deliver now
	stepOutput              // out holds a batch
	stepDropped             // the subscriber lags too far
	stepExit                // finished and everything delivered
)

// next takes the next batch from the ring.
func (s *subscription) next(maxLag int64) (step, Output, int) {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.ring
	if s.cursor < r.start() || r.end-s.cursor > maxLag {
		t.m.log.Info("terminal subscriber dropped", "terminal", t.id, "firstMissedSeq", s.cursor, "lastSeq", r.end)
		return stepDropped, Output{}, 0
	}
	n := min(r.end-s.cursor, maxBatch)
	if n == 0 {
		if t.finished {
			return stepExit, Output{}, t.exitCode
		}
		return stepIdle, Output{}, 0
	}
	data := make([]byte, n)
	r.read(s.cursor, data)
	out := Output{TerminalID: t.id, Seq: s.cursor, Data: data}
	s.cursor += n
	return stepOutput, out, 0
}

// backlog reports the bytes waiting and whether the terminal finished.
func (s *subscription) backlog() (int64, bool) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	return s.t.ring.end - s.cursor, s.t.finished
}

// run is the subscription's goroutine: on each wake it waits BatchInterval
// for more output unless the backlog is already large, then delivers all of
// it in batches of at most maxBatch bytes.
func (s *subscription) run(batch time.Duration, maxLag int64) {
	defer s.t.removeSub(s)
	timer := time.NewTimer(batch)
	timer.Stop()
	first := true
	for {
		select {
		case <-s.wake:
		case <-s.stop:
			return
		}
		if pending, finished := s.backlog(); !first && !finished && pending < flushNow {
			timer.Reset(batch)
			select {
			case <-timer.C:
			case <-s.stop:
				timer.Stop()
				return
			}
		}
		first = false
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			st, out, code := s.next(maxLag)
			switch st {
			case stepOutput:
				if !s.sub.Output(out) {
					return
				}
				continue
			case stepDropped:
				s.sub.Dropped(s.t.id, s.cursor)
				return
			case stepExit:
				s.sub.Exit(Exit{TerminalID: s.t.id, ExitCode: code})
				return
			}
			break
		}
	}
}

// addSub registers a subscription starting at afterSeq, clamped to what the
// ring holds and to the last maxLag bytes.
func (t *terminal) addSub(sub Subscriber, afterSeq, maxLag int64) *subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := max(afterSeq, t.ring.start(), t.ring.end-maxLag)
	cur = min(cur, t.ring.end)
	s := &subscription{t: t, sub: sub, cursor: cur, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	t.subs[s] = struct{}{}
	s.wake <- struct{}{} // deliver the replay (or the Exit) at once
	return s
}

func (t *terminal) removeSub(s *subscription) {
	t.mu.Lock()
	delete(t.subs, s)
	t.mu.Unlock()
}
