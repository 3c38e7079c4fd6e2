//go:build !windows

package terminal

import (
	"encoding/base64"
	"fmt"
	"testing"
	"time"
)

// benchFlood streams size bytes from `head -c` through a PTY to one
// subscriber per iteration and reports throughput (bytes delivered per
// second) and batching. A dropped subscriber subscribes again from where it
// was dropped, as a client would; drops counts how often.
func benchFlood(b *testing.B, size int, encode func([]byte)) {
	m := newManager(b, Options{})
	var total, outputs, drops int64
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		in := create(b, m, CreateOptions{Command: sh(fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", size))})
		c := newCounter()
		c.encode = encode
		unsub, err := m.Subscribe("p1", in.ID, 0, c)
		if err != nil {
			b.Fatal(err)
		}
		for done := false; !done; {
			select {
			case <-c.exited:
				done = true
			case seq := <-c.dropped: // like a client: subscribe again from there
				unsub()
				if unsub, err = m.Subscribe("p1", in.ID, seq, c); err != nil {
					b.Fatal(err)
				}
			case <-time.After(waitLimit):
				b.Fatal("flood did not end")
			}
		}
		elapsed += time.Since(start)
		unsub()
		total += c.bytes.Load()
		outputs += c.outputs.Load()
		drops += c.drops.Load()
		if err := m.Kill("p1", in.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total)/elapsed.Seconds()/1e6, "MB/s")
	b.ReportMetric(float64(outputs)/elapsed.Seconds(), "notifs/s")
	b.ReportMetric(float64(total)/float64(max(outputs, 1)), "B/notif")
	b.ReportMetric(float64(drops), "drops")
}

// BenchmarkFloodToSubscriber: a PTY producing at full speed, one subscriber
// that only counts (raw) or also base64-encodes each batch the way the
// terminal.output notification does (wire).
func BenchmarkFloodToSubscriber(b *testing.B) {
	b.Run("raw", func(b *testing.B) { benchFlood(b, 64<<20, nil) })
	var buf []byte
	b.Run("wire", func(b *testing.B) {
		benchFlood(b, 64<<20, func(p []byte) {
			buf = base64.StdEncoding.AppendEncode(buf[:0], p)
		})
	})
}

// BenchmarkSmallWrites: a shell printing 2000 short lines, one write each;
// the batching turns them into few notifications.
func BenchmarkSmallWrites(b *testing.B) {
	m := newManager(b, Options{})
	var total, outputs int64
	for b.Loop() {
		in := create(b, m, CreateOptions{Command: sh(`i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done`)})
		c := newCounter()
		unsub, err := m.Subscribe("p1", in.ID, 0, c)
		if err != nil {
			b.Fatal(err)
		}
		<-c.exited
		unsub()
		total += c.bytes.Load()
		outputs += c.outputs.Load()
		_ = m.Kill("p1", in.ID)
	}
	b.ReportMetric(float64(outputs)/float64(b.N), "notifs/op")
	b.ReportMetric(float64(total)/float64(max(outputs, 1)), "B/notif")
}

// BenchmarkRawPTY is the ceiling: the same flood read straight from the PTY
// into a buffer, without ring, subscriptions or batching.
func BenchmarkRawPTY(b *testing.B) {
	var total int64
	var elapsed time.Duration
	buf := make([]byte, readBuf)
	for b.Loop() {
		start := time.Now()
		p, err := startPTY(spawnSpec{Path: "/bin/sh", Args: []string{"-c", fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", 64<<20)}, Cols: 80, Rows: 24})
		if err != nil {
			b.Fatal(err)
		}
		for {
			n, err := p.Read(buf)
			total += int64(n)
			if err != nil {
				break
			}
		}
		elapsed += time.Since(start)
		_, _ = p.Wait()
		_ = p.Close()
	}
	b.ReportMetric(float64(total)/elapsed.Seconds()/1e6, "MB/s")
}
