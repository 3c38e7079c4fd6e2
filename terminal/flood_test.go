//go:build !windows

package terminal

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counter is a Subscriber that only counts, checking continuity.
type counter struct {
	bytes, outputs, drops atomic.Int64
	next                  atomic.Int64
	gaps                  atomic.Int64 // outputs not starting where the last ended (after a drop: expected)
	exited                chan struct{}
	dropped               chan int64
	encode                func([]byte) // optional per-Output work (wire encoding)
}

func newCounter() *counter {
	return &counter{exited: make(chan struct{}), dropped: make(chan int64, 1)}
}

func (c *counter) Output(o Output) bool {
	if c.outputs.Load() > 0 && o.Seq != c.next.Load() {
		c.gaps.Add(1)
	}
	if c.encode != nil {
		c.encode(o.Data)
	}
	c.next.Store(o.Seq + int64(len(o.Data)))
	c.bytes.Add(int64(len(o.Data)))
	c.outputs.Add(1)
	return true
}
func (c *counter) Exit(Exit) { close(c.exited) }
func (c *counter) Dropped(_ string, seq int64) {
	c.drops.Add(1)
	c.dropped <- seq
}

// heapSampler records the peak live heap until stopped.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.wg.Go(func() {
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > h.peak.Load() {
				h.peak.Store(ms.HeapAlloc)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	})
	return h
}

func (h *heapSampler) done() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak.Load()
}

func TestFloodBoundedAndOthersResponsive(t *testing.T) {
	const (
		// Enough to show the heap does not keep what went through (it
		// grew ~9 MiB with 50 MB), small enough to pass through a PTY
		// under -race on a loaded 2-core machine well before the
		// deadline (50 MB took 24 of 30 s there and failed once).
		floodBytes = 24_000_000
		heapBound  = 16 << 20 // keeping what went through would be ≥ 22.9 MiB
	)
	m := newManager(t, Options{})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	heap := sampleHeap()

	flood := create(t, m, CreateOptions{Command: []string{"yes"}}) // never stops by itself
	sub := newCounter()
	unsub, err := m.Subscribe("p1", flood.ID, 0, sub)
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	lastSeq := func() int64 { info, _ := m.Get("p1", flood.ID); return info.LastSeq }
	poll(t, "flood under way", func() bool { return lastSeq() > 5_000_000 })

	// Another terminal answers while the flood goes on.
	other := create(t, m, CreateOptions{Command: []string{"cat"}})
	r, _ := subscribe(t, m, "p1", other.ID, 0)
	if err := m.Write("p1", other.ID, []byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	r.waitCount(t, "ping", 2)
	if text, err := m.ReadTerminal(context.Background(), "p1", flood.ID, 5, 1000); err != nil || strings.Count(text, "y\n") != 4 {
		t.Fatalf("reading the flooding terminal: %q, %v", text, err)
	}

	poll(t, "50 MB through the flooding terminal", func() bool { return lastSeq() >= floodBytes })
	peak := heap.done()
	flood.LastSeq = lastSeq()

	m.mu.Lock()
	ft := m.terms[flood.ID]
	m.mu.Unlock()
	ft.mu.Lock()
	ringLen := len(ft.ring.buf)
	ft.mu.Unlock()
	if ringLen > DefaultScrollback {
		t.Fatalf("ring holds %d bytes", ringLen)
	}
	growth := int64(peak) - int64(base)
	t.Logf("%d MB through the PTY; peak heap growth %.1f MiB; subscriber got %d MB in %d outputs (%d drops)",
		flood.LastSeq/1e6, float64(growth)/(1<<20), sub.bytes.Load()/1e6, sub.outputs.Load(), sub.drops.Load())
	if growth > heapBound {
		t.Fatalf("heap grew by %d bytes while %d bytes streamed", growth, flood.LastSeq)
	}
	if sub.drops.Load() == 0 && sub.gaps.Load() != 0 {
		t.Fatalf("%d gaps without a drop", sub.gaps.Load())
	}

	if err := m.Kill("p1", flood.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.exited:
	case <-sub.dropped:
	case <-time.After(waitLimit):
		t.Fatal("flood subscriber neither exited nor dropped")
	}
	poll(t, "yes dead", func() bool { return gone(flood.Pid) })
}
