//go:build !windows

package ipc

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zqagent/sidecar/ipc/client"
)

// BenchmarkTerminalOutputToWebSocket measures a flooding PTY (64 MiB of
// 63-byte lines) through an in-process server to one WebSocket client on
// loopback, client decoding included: MB/s, notifications/s, bytes per
// notification. cmd/sidecar has the same against the real binary.
func BenchmarkTerminalOutputToWebSocket(b *testing.B) {
	const size = 64 << 20
	ts, _ := startTermServer(b)
	c, err := client.Dial(tctx(b), ts.url, ts.token, &client.Options{NotifyBuffer: 1 << 14})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(tctx(b), "bench", "1", false); err != nil {
		b.Fatal(err)
	}
	pid, _ := ts.openDir(b, c, "proj")
	var total, frames int64
	var elapsed time.Duration
	b.SetBytes(size)
	for b.Loop() {
		info := createTerm(b, c, map[string]any{"projectId": pid, "command": []string{"sh", "-c",
			fmt.Sprintf("read go; yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c %d", size)}})
		termSubscribe(b, c, pid, info.ID, 0)
		start := time.Now()
		termCall(b, c, "terminal.write", pid, info.ID, map[string]any{"data": "go\n"})
		n, f := drainUntilExit(b, c)
		elapsed += time.Since(start)
		total += n
		frames += f
		termCall(b, c, "terminal.kill", pid, info.ID, nil)
	}
	b.ReportMetric(float64(total)/1e6/elapsed.Seconds(), "MB/s")
	b.ReportMetric(float64(frames)/elapsed.Seconds(), "notifications/s")
	b.ReportMetric(float64(total)/float64(max(frames, 1)), "B/notification")
}

// drainUntilExit decodes terminal.output frames (by hand, as a lean client
// would) until terminal.exit; it returns the bytes and frames received.
func drainUntilExit(b *testing.B, c *client.Client) (n, frames int64) {
	ctx := tctx(b)
	var buf []byte
	for {
		select {
		case note, ok := <-c.Notifications():
			if !ok {
				b.Fatal("connection closed")
			}
			switch note.Method {
			case "terminal.exit":
				return n, frames
			case "terminal.dropped":
				b.Fatal("dropped")
			case "terminal.output":
				_, rest, _ := bytes.Cut(note.Params, []byte(`"seq":`))
				seqText, rest, _ := bytes.Cut(rest, []byte(`,"data":"`))
				if _, err := strconv.ParseInt(string(seqText), 10, 64); err != nil {
					b.Fatal(err)
				}
				data := rest[:bytes.IndexByte(rest, '"')]
				var err error
				buf, err = base64.StdEncoding.AppendDecode(buf[:0], data)
				if err != nil {
					b.Fatal(err)
				}
				n += int64(len(buf))
				frames++
			}
		case <-ctx.Done():
			b.Fatal("timed out")
		}
	}
}
