package ipc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// BenchmarkDeltaEventsInProcess measures delta events per second from the
// engine through the store (group commit) and the WebSocket to one client,
// in one process (profile it with -cpuprofile).
func BenchmarkDeltaEventsInProcess(b *testing.B) {
	const deltas = 100_000
	resp := make([]scripted.Response, 0, b.N)
	for range b.N {
		resp = append(resp, scripted.Response{Text: strings.Repeat("x", deltas), ChunkSize: 1})
	}
	ts := startServer(b, withProvider(scripted.New(resp...)))
	c := ts.dial(b)
	sid := ts.session(b, c, nil)
	if _, err := c.Subscribe(tctx(b), sid, 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	total, drops := 0, 0
	for range b.N {
		if _, err := c.StartTurn(tctx(b), sid, "stream"); err != nil {
			b.Fatal(err)
		}
		for n := range c.Notifications() {
			if n.Method == "session.dropped" {
				// Fell behind during the burst: continue from the last seq,
				// as a shell would (the catch-up is part of the figure).
				var d protocol.SessionDropped
				if err := json.Unmarshal(n.Params, &d); err != nil {
					b.Fatal(err)
				}
				drops++
				go func() {
					if _, err := c.Subscribe(tctx(b), sid, d.LastSeq); err != nil {
						b.Error(err)
					}
				}()
				continue
			}
			if bytes.Contains(n.Params, []byte(`"type":"assistant_delta"`)) {
				// One rune per model delta; several may share a frame.
				var ev struct {
					Data struct {
						Text string `json:"text"`
					} `json:"data"`
				}
				if err := json.Unmarshal(n.Params, &ev); err != nil {
					b.Fatal(err)
				}
				total += len(ev.Data.Text)
			}
			if bytes.Contains(n.Params, []byte(`"type":"turn_end"`)) {
				break
			}
		}
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "deltas/s")
	b.ReportMetric(float64(drops), "drops")
	if total != deltas*b.N {
		b.Fatalf("got %d deltas, want %d", total, deltas*b.N)
	}
}
