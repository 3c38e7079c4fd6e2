package terminal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit fails a test that waits for a condition that never comes; it is
// a hang guard, not a speed assertion.
const waitLimit = 30 * time.Second

// recorder is a Subscriber that keeps everything it gets and checks that the
// stream has no gap and no duplicate.
type recorder struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every event
	data     bytes.Buffer
	firstSeq int64 // Seq of the first Output, -1 before
	next     int64 // offset after the last Output
	outputs  int
	seqErr   error
	exit     *Exit
	dropped  int64 // -1 unless Dropped was called
	stopped  bool  // ignore everything after stop
	hold     chan struct{}
	holding  chan struct{} // closed when the first Output is held
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}), firstSeq: -1, dropped: -1}
}

func (r *recorder) notifyLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) Output(o Output) bool {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return false
	}
	if r.firstSeq < 0 {
		r.firstSeq = o.Seq
	} else if o.Seq != r.next && r.seqErr == nil {
		r.seqErr = fmt.Errorf("output at seq %d, want %d", o.Seq, r.next)
	}
	r.next = o.Seq + int64(len(o.Data))
	r.data.Write(o.Data)
	r.outputs++
	hold := r.hold
	r.hold = nil
	r.notifyLocked()
	r.mu.Unlock()
	if hold != nil {
		close(r.holding)
		<-hold
	}
	return true
}

func (r *recorder) Exit(e Exit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exit = &e
	r.notifyLocked()
}

func (r *recorder) Dropped(_ string, seq int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped = seq
	r.notifyLocked()
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.data.String()
}

// waitUntil waits until cond (called with r locked) holds.
func (r *recorder) waitUntil(t testing.TB, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		ok, ch := cond(r), r.changed
		if !ok && r.seqErr != nil {
			err := r.seqErr
			r.mu.Unlock()
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if !ok && r.dropped >= 0 {
			r.mu.Unlock()
			t.Fatalf("waiting for %s: subscriber dropped at %d", what, r.dropped)
		}
		data := r.data.String()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s after %v; output so far: %q", what, waitLimit, tail(data, 2000))
		}
	}
}

func (r *recorder) waitFor(t testing.TB, substr string) {
	t.Helper()
	r.waitUntil(t, fmt.Sprintf("%q", substr), func(r *recorder) bool { return bytes.Contains(r.data.Bytes(), []byte(substr)) })
}

func (r *recorder) waitExit(t testing.TB) Exit {
	t.Helper()
	r.waitUntil(t, "exit", func(r *recorder) bool { return r.exit != nil })
	r.mu.Lock()
	defer r.mu.Unlock()
	return *r.exit
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func newManager(t testing.TB, opts Options) *Manager {
	t.Helper()
	if opts.KillGrace == 0 {
		opts.KillGrace = 300 * time.Millisecond
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	m := NewManager(opts)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func create(t testing.TB, m *Manager, o CreateOptions) Info {
	t.Helper()
	if o.ProjectID == "" {
		o.ProjectID = "p1"
	}
	if o.ProjectDir == "" {
		o.ProjectDir = t.TempDir()
	}
	in, err := m.Create(context.Background(), o)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return in
}

func subscribe(t testing.TB, m *Manager, projectID, id string, after int64) (*recorder, func()) {
	t.Helper()
	r := newRecorder()
	unsub, err := m.Subscribe(projectID, id, after, r)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	t.Cleanup(unsub)
	return r, unsub
}
