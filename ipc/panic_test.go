package ipc

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
)

// panicky panics on requests whose last user message says "panic" and
// streams from a script otherwise.
type panicky struct{ next llm.Provider }

func (p panicky) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == llm.RoleUser {
			if strings.Contains(m.Content, "panic") {
				panic("provider exploded")
			}
			break
		}
	}
	return p.next.Stream(ctx, req)
}

func (p panicky) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	return p.next.Chat(ctx, req)
}

// TestPanickingProviderIsContained: a provider panic ends that turn with an
// internal error and turn_end {status: error}; the sidecar and another
// session carry on.
func TestPanickingProviderIsContained(t *testing.T) {
	ts := startServer(t, withProvider(panicky{next: scripted.New(scripted.Response{Text: "still here"})}))
	c := ts.dial(t)
	pid := ts.project(t, c)
	bad, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	good, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	for _, sid := range []string{bad, good} {
		_, err = c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
	}
	_, err = c.StartTurn(tctx(t), bad, "please panic")
	require.NoError(t, err)
	evs := collectTurn(t, c, bad)
	require.Equal(t, 1, countType(evs, "error"))
	var errData string
	for _, ev := range evs {
		if ev.Type == "error" {
			errData = string(ev.Data)
		}
	}
	require.Contains(t, errData, `"error_type":"internal"`)
	require.NotContains(t, errData, "goroutine", "no stack on the wire")
	require.Contains(t, string(evs[len(evs)-1].Data), `"status":"error"`)

	_, err = c.StartTurn(tctx(t), good, "hello")
	require.NoError(t, err)
	require.Equal(t, "still here", textOf(collectTurn(t, c, good)))
}
