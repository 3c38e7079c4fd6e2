package ipc

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/store"
)

// TestNewSettlesTheTurnsOfADeadProcess: the backend's open (under New)
// settles what a dead process left, with no call from the embedder: a turn
// that waited for an answer is suspended, one that ran with nothing
// pending gets its one turn_end. A server of the same store that only
// opened serves them settled.
func TestNewSettlesTheTurnsOfADeadProcess(t *testing.T) {
	ts := startServer(t, withProvider(scripted.New()))
	c := ts.dial(t)
	waiting, ran := ts.session(t, c, nil), ts.session(t, c, nil)
	ctx := tctx(t)
	// What a process that died mid-turn left in the store.
	_, err := ts.st.Append(ctx, waiting,
		store.EventInput{TurnID: "t-wait", Type: "turn_start", Data: json.RawMessage(`{"taskId":"t-wait","input":"x"}`), Status: string(backend.StateRunning), CountTask: true},
		store.EventInput{TurnID: "t-wait", Type: "permission_required", Data: json.RawMessage(`{"taskId":"t-wait","requestId":"rq","reqId":"c1","name":"run_shell","arguments":{"command":"echo x"},"reason":"shell","category":"exec","command":"echo","alwaysCommand":true}`),
			Pending: &store.PendingInput{RequestID: "rq", Kind: store.KindApproval, ToolCallID: "c1"}})
	require.NoError(t, err)
	_, err = ts.st.Append(ctx, ran,
		store.EventInput{TurnID: "t-ran", Type: "turn_start", Data: json.RawMessage(`{"taskId":"t-ran","input":"x"}`), Status: string(backend.StateRunning), CountTask: true})
	require.NoError(t, err)

	srv, err := New(Options{Store: ts.st, DataDir: ts.dir, Token: testToken, Logger: slog.New(slog.DiscardHandler), Provider: scripted.New()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close(tctx(t))) })

	ss, err := ts.st.Session(ctx, waiting)
	require.NoError(t, err)
	require.Equal(t, string(backend.StateSuspended), ss.Status)
	pend, err := ts.st.PendingRequests(ctx, waiting)
	require.NoError(t, err)
	require.Len(t, pend, 1, "its request stays answerable")
	ss, err = ts.st.Session(ctx, ran)
	require.NoError(t, err)
	require.Equal(t, string(backend.StateInterrupted), ss.Status)
	end, found, err := ts.st.LastEventOfType(ctx, ran, "turn_end")
	require.NoError(t, err)
	require.True(t, found, "the turn that ran got its turn_end")
	require.Contains(t, string(end.Data), `"reason":"sidecar_restart"`)
}
