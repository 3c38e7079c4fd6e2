package ipc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm/scripted"
)

// deltaTexts concatenates the text of the events of one delta type.
func deltaTexts(t *testing.T, evs []client.Event, typ string) (string, int) {
	t.Helper()
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var d struct {
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		b.WriteString(d.Text)
		n++
	}
	return b.String(), n
}

// A stream of one-rune deltas, coalesced while the store commits, reaches
// the live subscriber and a later replay as exactly the model's text (and
// reasoning), in order, gap-free, and the replay is the same events.
func TestCoalescedStreamReplaysTheSameText(t *testing.T) {
	var text, reasoning strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&text, "%d·", i) // every piece distinct: a lost, doubled or moved delta shows
		fmt.Fprintf(&reasoning, "r%d ", i)
	}
	resp := scripted.Response{Text: text.String(), Reasoning: reasoning.String(), ChunkSize: 1}
	ts := startServer(t, withProvider(scripted.New(resp)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "stream")
	require.NoError(t, err)
	live := collectTurn(t, c, sid)
	for i, ev := range live {
		require.Equal(t, int64(i+1), ev.Seq, "live seqs are gap-free")
	}
	got, n := deltaTexts(t, live, "assistant_delta")
	require.Equal(t, text.String(), got)
	gotR, nR := deltaTexts(t, live, "reasoning_delta")
	require.Equal(t, reasoning.String(), gotR)
	chunks := len([]rune(text.String())) + len([]rune(reasoning.String()))
	require.LessOrEqual(t, n+nR, chunks)
	t.Logf("%d delta chunks stored as %d events", chunks, n+nR)

	// A replay from the start is the same events.
	c2 := ts.dial(t)
	_, err = c2.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	replay := collectTurn(t, c2, sid)
	require.Len(t, replay, len(live))
	for i := range live {
		require.Equal(t, live[i].Seq, replay[i].Seq)
		require.Equal(t, live[i].Type, replay[i].Type)
		require.JSONEq(t, string(live[i].Data), string(replay[i].Data))
	}
	got, _ = deltaTexts(t, replay, "assistant_delta")
	require.Equal(t, text.String(), got)
}
