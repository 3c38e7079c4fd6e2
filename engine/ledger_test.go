package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// failingLedger cannot make a call's start durable (its store's commit
// fails); it records what it was asked.
type failingLedger struct {
	begun   atomic.Int32
	started []string
}

func (l *failingLedger) Begin(context.Context, string, string) error {
	l.begun.Add(1)
	return errors.New("disk I/O error")
}

func (l *failingLedger) Started(context.Context, string) ([]string, error) { return l.started, nil }

// TestLedgerFailureRunsNothing: when the start of a call cannot be made
// durable the tool never runs, however it was allowed (a low-risk parallel
// call, an approved one): the call gets a not_recorded error, the calls
// after it are not started, and the turn ends with a storage error.
func TestLedgerFailureRunsNothing(t *testing.T) {
	l := &failingLedger{}
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.Ledger = l },
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"x":"a"}`), call("c2", "danger", `{}`)}},
		scripted.Response{Text: "never asked"})
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeOnce, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Zero(t, r.calls.Load(), "no handler ran")
	require.Equal(t, int32(1), l.begun.Load(), "the first failure stops the turn: nothing else starts")
	fins := find[protocol.ToolFinishedData](evs)
	require.Len(t, fins, 2)
	require.Equal(t, protocol.ToolError, fins[0].Status)
	require.Equal(t, "not_recorded", fins[0].Reason)
	require.Contains(t, fins[0].ResultPreview, "did not run it")
	require.Equal(t, protocol.ToolInterrupted, fins[1].Status)
	require.Empty(t, find[protocol.PermissionRequiredData](evs), "nothing more is asked once the turn fails")
	errs := find[protocol.EventErrorData](evs)
	require.Len(t, errs, 1)
	require.Equal(t, "storage", errs[0].ErrorType)
	require.Equal(t, protocol.TurnError, last(evs).Status)
	require.Equal(t, 1, countTurnEnds(evs))
	require.Len(t, r.provider.Requests(), 1, "the model is not asked again")
}

// TestResumeSkipsStartedCalls: a resumed turn asks the ledger which calls
// of the dead turn began; those get MayHaveRunResult and are never run
// again, the others run.
func TestResumeSkipsStartedCalls(t *testing.T) {
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`), call("c2", "echo", `{"x":"b"}`)}},
	}
	l := &failingLedger{started: []string{"c1"}}
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.Messages = history; o.Ledger = okLedger{l} }, scripted.Response{Text: "checked"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Kind: engine.TurnResume, ID: "t-new", From: "t-dead"}))
	fins := find[protocol.ToolFinishedData](evs)
	require.Len(t, fins, 2)
	require.Equal(t, "c1", fins[0].ReqID)
	require.Contains(t, fins[0].ResultPreview, "may have run")
	require.Equal(t, protocol.ToolOK, fins[1].Status)
	require.Equal(t, int32(1), r.calls.Load(), "only c2 ran")
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.Equal(t, "t-new", last(evs).TaskID)
}

// okLedger records nothing and reports what its failingLedger holds as
// started.
type okLedger struct{ l *failingLedger }

func (okLedger) Begin(context.Context, string, string) error { return nil }
func (o okLedger) Started(ctx context.Context, turn string) ([]string, error) {
	return o.l.Started(ctx, turn)
}

// TestTurnEndWaitsForTools: an interrupted turn ends only after its tool
// goroutines returned, also a tool that ignores its context for longer than
// the grace the engine allows (it is then logged, never abandoned). Runs
// on synctest's clock: the tool returns 10 s after the interrupt.
func TestTurnEndWaitsForTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, permission.ModeInteractive, nil, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "deaf", `{}`)}})
		running, release := make(chan struct{}), make(chan struct{})
		var returned atomic.Bool
		r.reg.MustRegister(tools.Spec{Name: "deaf", Schema: schema("deaf"), Meta: tools.Metadata{RiskLevel: tools.RiskLow, Class: tools.ClassRead}, Handler: func(ctx context.Context, c tools.Call) (any, error) {
			close(running)
			<-release // ignores ctx
			returned.Store(true)
			return "late", nil
		}})
		go func() {
			<-running
			r.eng.Interrupt()
			time.Sleep(10 * time.Second) // synctest's clock: past the grace
			close(release)
		}()
		var evs []engine.Event
		for ev := range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
			evs = append(evs, ev)
			switch ev.Type {
			case protocol.EventToolFinished, protocol.EventTurnEnd:
				require.True(t, returned.Load(), "%s before the tool returned", ev.Type)
			}
		}
		require.Equal(t, protocol.TurnInterrupted, last(evs).Status)
		require.Equal(t, protocol.ToolOK, find[protocol.ToolFinishedData](evs)[0].Status, "it ran to its end: its real result is kept")
	})
}

// TestSuspendRecordsNothingMore: a turn suspended while it waits for an
// approval (the sidecar shuts down) emits nothing more and leaves its call
// unanswered in the history, so that a resume after the restart runs it.
func TestSuspendRecordsNothingMore(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`)}})
	asked := make(chan struct{})
	r.eng.SetApprover(func(ctx context.Context, _ permission.Request) (permission.Outcome, error) {
		close(asked)
		<-ctx.Done()
		return permission.OutcomeDeny, ctx.Err()
	})
	go func() {
		<-asked
		r.eng.Suspend()
	}()
	var after []protocol.EventType
	seen := false
	for ev := range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
		if seen {
			after = append(after, ev.Type)
		}
		seen = seen || ev.Type == protocol.EventPermissionRequired
	}
	require.True(t, seen)
	require.Empty(t, after, "nothing is emitted after the suspension")
	require.Zero(t, r.calls.Load())
	require.True(t, r.eng.Resumable(), "the call is still unanswered")
}
