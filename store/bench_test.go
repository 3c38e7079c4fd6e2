package store

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
)

var deltaData = json.RawMessage(`{"taskId":"t1","text":"some streamed text","reqId":"llm-1"}`)

// BenchmarkEnqueueOneSession: one session streaming deltas with group
// commit (the engine's path through Recorder.Record).
func BenchmarkEnqueueOneSession(b *testing.B) {
	s := openTest(b)
	sid := newSession(b, s).ID
	in := EventInput{TurnID: "t1", Type: "assistant_delta", Data: deltaData}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.Enqueue(sid, in, nil)
	}
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEnqueue20Sessions: 20 sessions streaming at once.
func BenchmarkEnqueue20Sessions(b *testing.B) {
	s := openTest(b)
	const n = 20
	ids := make([]string, n)
	for i := range ids {
		ids[i] = newSession(b, s).ID
	}
	in := EventInput{TurnID: "t1", Type: "assistant_delta", Data: deltaData}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, sid := range ids {
		count := b.N / n
		if i < b.N%n {
			count++
		}
		wg.Go(func() {
			for range count {
				s.Enqueue(sid, in, nil)
			}
		})
	}
	wg.Wait()
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAppendSync: one synchronous Append per event (a commit each), for
// comparison with group commit.
func BenchmarkAppendSync(b *testing.B) {
	s := openTest(b)
	sid := newSession(b, s).ID
	ctx := context.Background()
	in := EventInput{TurnID: "t1", Type: "assistant_delta", Data: deltaData}
	b.ResetTimer()
	for range b.N {
		if _, err := s.Append(ctx, sid, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReplay100k pages through a 100,000-event log with EventsAfter.
func BenchmarkReplay100k(b *testing.B) {
	s := openTest(b)
	sid := newSession(b, s).ID
	const total = 100_000
	in := EventInput{TurnID: "t1", Type: "assistant_delta", Data: deltaData}
	for range total {
		s.Enqueue(sid, in, nil)
	}
	ctx := context.Background()
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		var after int64
		n := 0
		for {
			page, err := s.EventsAfter(ctx, sid, after, DefaultPageSize)
			if err != nil {
				b.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			n += len(page)
			after = page[len(page)-1].Seq
		}
		if n != total {
			b.Fatalf("replayed %d events, want %d", n, total)
		}
	}
	b.ReportMetric(float64(b.N*total)/b.Elapsed().Seconds(), "events/s")
}
