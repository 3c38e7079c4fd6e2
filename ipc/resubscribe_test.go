package ipc

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm/scripted"
)

// TestResubscribeNeverDuplicates: re-subscribing on one connection from
// the last seq seen, over and over while a turn streams (crossing from
// stored to live events each time), gives one strictly increasing,
// gap-free run of seqs on that connection.
func TestResubscribeNeverDuplicates(t *testing.T) {
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	text := strings.Repeat("x", 4000)
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: text, ChunkSize: 1})))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)

	var seen atomic.Int64
	var got strings.Builder // the streamed text; read after ended
	ended := make(chan struct{})
	bad := make(chan string, 1)
	go func() {
		defer close(ended)
		prev := int64(0)
		for n := range c.Notifications() {
			if n.Method != "session.event" {
				continue
			}
			var ev struct {
				Seq  int64  `json:"seq"`
				Type string `json:"type"`
				Data struct {
					Text string `json:"text"`
				} `json:"data"`
			}
			if json.Unmarshal(n.Params, &ev) != nil {
				continue
			}
			if ev.Seq != prev+1 {
				select {
				case bad <- "seq " + itoa(ev.Seq) + " after " + itoa(prev):
				default:
				}
				return
			}
			prev = ev.Seq
			seen.Store(prev)
			if ev.Type == "assistant_delta" {
				got.WriteString(ev.Data.Text)
			}
			if ev.Type == "turn_end" {
				return
			}
		}
	}()
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "stream")
	require.NoError(t, err)
	for i := 0; i < rounds; i++ {
		select {
		case <-ended:
			i = rounds
			continue
		default:
		}
		_, err := c.Subscribe(tctx(t), sid, seen.Load())
		require.NoError(t, err)
	}
	<-ended
	select {
	case msg := <-bad:
		t.Fatal("duplicate or gap on re-subscribe: " + msg)
	default:
	}
	require.Equal(t, text, got.String(), "the whole stream, once (deltas may be coalesced)")
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
