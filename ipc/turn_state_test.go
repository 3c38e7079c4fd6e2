package ipc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestInterruptBeforeEngineLoads: turn.interrupt right after turn.start,
// while the session's engine is still loading, stops the turn: it ends
// interrupted, once, and the model is never asked.
func TestInterruptBeforeEngineLoads(t *testing.T) {
	loading, release := make(chan struct{}), make(chan struct{})
	ts := startServer(t, withProvider(scripted.New(scripted.Response{Text: "should not appear"})), func(o *Options) {
		o.OnEngine = func(string, *engine.Engine) {
			close(loading)
			<-release // the engine is not loaded until the interrupt was answered
		}
	})
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	<-loading
	var res struct {
		Interrupted bool `json:"interrupted"`
	}
	require.NoError(t, c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": sid}, &res))
	close(release)
	require.True(t, res.Interrupted)

	evs := collectTurn(t, c, sid)
	require.Contains(t, string(evs[len(evs)-1].Data), `"status":"interrupted"`)
	require.Equal(t, 0, countType(evs, "llm_request"), "the model is not asked")
	require.Empty(t, textOf(evs))
	require.NoError(t, ts.srv.b.LoadedSession(sid).WaitIdle(tctx(t)))
}

// TestRetryOnlyAfterRetriableError: after a retriable error and a
// successful retry, a second turn.retry is a conflict, and so is a retry
// while a turn runs.
func TestRetryOnlyAfterRetriableError(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New(
		scripted.Response{Err: "overloaded", ErrKind: "server"},
		scripted.Response{Text: "retried"},
	)))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "go")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Equal(t, 1, countType(evs, "error"))

	var res protocol.TurnResult
	require.NoError(t, c.Call(tctx(t), "turn.retry", map[string]string{"sessionId": sid}, &res))
	require.NotEmpty(t, res.TurnID)
	evs = collectTurn(t, c, sid)
	require.Equal(t, "retried", textOf(evs))
	require.NoError(t, ts.srv.b.LoadedSession(sid).WaitIdle(tctx(t)))

	err = c.Call(tctx(t), "turn.retry", map[string]string{"sessionId": sid}, &res)
	require.Equal(t, client.CodeConflict, client.Code(err), "nothing left to retry")
	var we *client.Error
	require.ErrorAs(t, err, &we)
	require.Contains(t, we.Message, "retriable")
}

// TestTurnTextLimits: turn.start and turn.steer texts over backend.MaxTurnText are
// refused with -32602 naming text, and nothing is recorded.
func TestTurnTextLimits(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	big := strings.Repeat("x", backend.MaxTurnText+1)
	for _, m := range []string{"turn.start", "turn.steer"} {
		err := c.Call(tctx(t), m, map[string]string{"sessionId": sid, "text": big}, nil)
		require.Equal(t, client.CodeInvalidParams, client.Code(err), m)
		require.Contains(t, err.Error(), "text", m)
		require.Less(t, len(err.Error()), 1024, "the error does not echo the text")
	}
	last, err := ts.st.LastSeq(tctx(t), sid)
	require.NoError(t, err)
	require.Zero(t, last, "nothing recorded")
}
