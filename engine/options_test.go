package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// engine.New honours the context-window options (seed TurnEngineOpts):
// without a Compactor it builds the default one from them.
func TestNewHonoursContextWindowOptions(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) {
		o.ContextWindow, o.ThresholdPct, o.SoftThresholdPct, o.CapTokens = 20_000, 0.5, 0.3, 8_000
	}, scripted.Response{Text: "hi"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	raw := r.eng.CompactionState()
	require.NotEmpty(t, raw, "engine.New built no compactor")
	var st struct{ ContextWindow, HardTokens, SoftTokens int }
	require.NoError(t, json.Unmarshal(raw, &st))
	require.Equal(t, 20_000, st.ContextWindow)
	require.Equal(t, 8_000, st.HardTokens, "CapTokens caps 50% of the window")
	require.Equal(t, 6_000, st.SoftTokens)

	off := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.NoCompaction = true })
	require.Nil(t, off.eng.Compactor())
}

// engine.New compacts: a context overflow is summarised and retried.
func TestNewCompactsOnOverflow(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{Err: "This model's maximum context length is 8192 tokens", ErrKind: "context_overflow"},
		scripted.Response{Text: "fits now"})
	r.provider.AppendChat("summary")
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.NotEmpty(t, find[protocol.CompactingData](evs))
}

// The approver is readable (seed engine.approver).
func TestApproverIsReadable(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil)
	require.Nil(t, r.eng.Approver())
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeDeny, nil
	})
	a := r.eng.Approver()
	require.NotNil(t, a)
	out, err := a(context.Background(), permission.Request{})
	require.NoError(t, err)
	require.Equal(t, permission.OutcomeDeny, out)
}
