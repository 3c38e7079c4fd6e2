package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/interact"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is an engine on a scripted provider with a few test tools.
type rig struct {
	t        testing.TB
	ws       *confine.Workspace
	provider *scripted.Provider
	reg      *tools.Registry
	perms    *permission.Engine
	eng      *engine.Engine
	calls    atomic.Int32 // handler invocations of the test tools
}

func newRig(t testing.TB, mode permission.Mode, opts func(*engine.Options), responses ...scripted.Response) *rig {
	t.Helper()
	ws, err := confine.New(t.TempDir())
	require.NoError(t, err)
	r := &rig{t: t, ws: ws, provider: scripted.New(responses...), reg: tools.NewRegistry()}
	r.perms = permission.New(permission.Options{Workspace: ws, Mode: mode})
	r.registerTestTools()
	o := engine.Options{Provider: r.provider, Registry: r.reg, Permissions: r.perms, Model: "test-model", Instructions: "You are a test.", Lang: "en"}
	if opts != nil {
		opts(&o)
	}
	r.eng, err = engine.New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.eng.Close() })
	return r
}

func schema(name string) llm.ToolSchema {
	return llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{Name: name, Description: name, Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)}}
}

func (r *rig) registerTestTools() {
	low := tools.Metadata{Category: "test", RiskLevel: tools.RiskLow, Class: tools.ClassRead}
	high := tools.Metadata{Category: "test", RiskLevel: tools.RiskHigh, Class: tools.ClassExec, RequiresApproval: true}
	r.reg.MustRegister(tools.Spec{Name: "echo", Schema: schema("echo"), Meta: low, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		r.calls.Add(1)
		var a struct{ X string }
		if err := tools.DecodeArgs(c.Args, &a); err != nil {
			return nil, err
		}
		return "echo:" + a.X, nil
	}})
	r.reg.MustRegister(tools.Spec{Name: "danger", Schema: schema("danger"), Meta: high, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		r.calls.Add(1)
		return map[string]string{"ran": "danger"}, nil
	}})
	r.reg.MustRegister(tools.Spec{Name: "fail", Schema: schema("fail"), Meta: low, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		return nil, tools.Errorf("boom_type", "it broke")
	}})
	r.reg.MustRegister(tools.Spec{Name: "panic", Schema: schema("panic"), Meta: low, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		panic("tool exploded")
	}})
	r.reg.MustRegister(tools.Spec{Name: "big", Schema: schema("big"), Meta: low, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		return strings.Repeat("0123456789", 20_000), nil
	}})
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func collect(seq iter.Seq[engine.Event]) []engine.Event {
	var out []engine.Event
	for ev := range seq {
		out = append(out, ev)
	}
	return out
}

func types(evs []engine.Event) []protocol.EventType {
	out := make([]protocol.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func compactTypes(evs []engine.Event) []protocol.EventType {
	var out []protocol.EventType
	for _, e := range evs {
		if e.Type == protocol.EventAssistantDelta || e.Type == protocol.EventReasoningDelta {
			if len(out) > 0 && out[len(out)-1] == e.Type {
				continue
			}
		}
		out = append(out, e.Type)
	}
	return out
}

func last(evs []engine.Event) protocol.TurnEndData {
	return evs[len(evs)-1].Data.(protocol.TurnEndData)
}

func countTurnEnds(evs []engine.Event) int {
	n := 0
	for _, e := range evs {
		if e.Type == protocol.EventTurnEnd {
			n++
		}
	}
	return n
}

func find[T protocol.EventData](evs []engine.Event) []T {
	var out []T
	for _, e := range evs {
		if d, ok := e.Data.(T); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestTextTurnEventOrder(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{Text: "hello there, world", Reasoning: "thinking", Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13}})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{ID: "t1", Input: engine.Input{Text: "hi"}}))
	require.Equal(t, []protocol.EventType{
		protocol.EventTurnStart, protocol.EventLLMRequest, protocol.EventReasoningDelta, protocol.EventAssistantDelta,
		protocol.EventAssistantMessage, protocol.EventUsage, protocol.EventIterationEnd, protocol.EventTurnEnd,
	}, compactTypes(evs))
	end := last(evs)
	require.Equal(t, protocol.TurnCompleted, end.Status)
	require.Equal(t, 1, end.Iterations)
	for _, e := range evs {
		require.Equal(t, "t1", e.TaskID(), "every event carries the turn id (%s)", e.Type)
	}
	msg := find[protocol.AssistantMessageData](evs)[0]
	require.Equal(t, "hello there, world", msg.Text)
	require.Equal(t, "thinking", msg.Reasoning)
	require.Equal(t, 13, msg.Usage.TotalTokens)
	var text strings.Builder
	for _, d := range find[protocol.DeltaData](evs) {
		text.WriteString(d.Text)
	}
	require.Equal(t, "thinkinghello there, world", text.String())

	h := r.eng.Messages()
	require.Len(t, h, 3)
	require.Equal(t, llm.RoleSystem, h[0].Role)
	require.Equal(t, "hi", h[1].Content)
	require.Equal(t, "hello there, world", h[2].Content)

	// The event data marshals to the seed's field names.
	b, err := json.Marshal(evs[len(evs)-1].Data)
	require.NoError(t, err)
	require.JSONEq(t, `{"taskId":"t1","status":"completed","iterations":1,"produced_files":[]}`, string(b))
}

func TestMultiTurnHistoryCarriesOver(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{Text: "one"}, scripted.Response{Text: "two"})
	collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "first"}}))
	collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "second"}}))
	reqs := r.provider.Requests()
	require.Len(t, reqs, 2)
	var contents []string
	for _, m := range reqs[1].Messages {
		contents = append(contents, m.Content)
	}
	require.Equal(t, []string{"You are a test.", "first", "one", "second"}, contents)
}

func TestParallelLowRiskToolsAndResultsInHistory(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"x":"a"}`), call("c2", "echo", `{"x":"b"}`)}},
		scripted.Response{Text: "done"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.Equal(t, int32(2), r.calls.Load())
	fin := find[protocol.ToolFinishedData](evs)
	require.Len(t, fin, 2)
	for _, f := range fin {
		require.Equal(t, protocol.ToolOK, f.Status)
	}
	require.Len(t, find[protocol.PermissionRequiredData](evs), 0)
	// The second request carries both tool results.
	second := r.provider.Requests()[1].Messages
	got := map[string]string{}
	for _, m := range second {
		if m.Role == llm.RoleTool {
			got[m.ToolCallID] = m.Content
		}
	}
	require.Equal(t, map[string]string{"c1": "echo:a", "c2": "echo:b"}, got)
	require.Equal(t, 2, last(evs).Iterations)
}

func TestApprovalOutcomes(t *testing.T) {
	cases := []struct {
		name        string
		outcome     permission.Outcome
		wantRuns    int32
		wantAsks    int
		wantStatus  protocol.ToolStatus
		secondTools int
	}{
		{"once asks twice", permission.OutcomeOnce, 2, 2, protocol.ToolOK, 2},
		{"always_tool asks once", permission.OutcomeAlwaysTool, 2, 1, protocol.ToolOK, 2},
		{"deny runs nothing", permission.OutcomeDeny, 0, 2, protocol.ToolDenied, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, permission.ModeInteractive, nil,
				scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`)}},
				scripted.Response{ToolCalls: []llm.ToolCall{call("c2", "danger", `{}`)}},
				scripted.Response{Text: "done"})
			var asked []permission.Request
			r.eng.SetApprover(func(ctx context.Context, req permission.Request) (permission.Outcome, error) {
				asked = append(asked, req)
				return tc.outcome, nil
			})
			evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
			require.Equal(t, protocol.TurnCompleted, last(evs).Status)
			require.Equal(t, tc.wantRuns, r.calls.Load())
			require.Len(t, asked, tc.wantAsks)
			perms := find[protocol.PermissionRequiredData](evs)
			require.Len(t, perms, tc.wantAsks)
			for i, p := range perms {
				require.NotEmpty(t, p.RequestID)
				require.Equal(t, asked[i].RequestID, p.RequestID, "the event's requestId is the approver's")
				require.Equal(t, asked[i].ToolCallID, p.ReqID)
			}
			for _, f := range find[protocol.ToolFinishedData](evs) {
				require.Equal(t, tc.wantStatus, f.Status)
			}
		})
	}
}

func TestNoApproverFailsClosed(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`)}}, scripted.Response{Text: "never"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnError, last(evs).Status)
	require.Equal(t, int32(0), r.calls.Load())
	errs := find[protocol.EventErrorData](evs)
	require.Len(t, errs, 1)
	require.Equal(t, "approval", errs[0].ErrorType)
	require.Equal(t, 1, countTurnEnds(evs))
	// History stays valid: the call has a result.
	h := r.eng.Messages()
	require.Equal(t, llm.RoleTool, h[len(h)-1].Role)
}

func TestDefaultApprovalDeny(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.DefaultApproval = permission.DefaultApproval("deny") },
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`)}}, scripted.Response{Text: "ok"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.Equal(t, protocol.ToolDenied, find[protocol.ToolFinishedData](evs)[0].Status)
	require.Equal(t, int32(0), r.calls.Load())
}

func TestReadOnlyModeDeniesExec(t *testing.T) {
	r := newRig(t, permission.ModePlan, nil, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", `{}`)}}, scripted.Response{Text: "ok"})
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		t.Fatal("plan mode must not ask")
		return permission.OutcomeDeny, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.ToolDenied, find[protocol.ToolFinishedData](evs)[0].Status)
	require.Equal(t, int32(0), r.calls.Load())
}

func TestToolErrorsBecomeResults(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "fail", `{}`), call("c2", "panic", `{}`), call("c3", "nosuch", `{}`), call("c4", "echo", `not json`)}},
		scripted.Response{Text: "recovered"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	results := map[string]map[string]string{}
	for _, m := range r.eng.Messages() {
		if m.Role == llm.RoleTool {
			var v map[string]string
			require.NoError(t, json.Unmarshal([]byte(m.Content), &v), m.Content)
			results[m.ToolCallID] = v
		}
	}
	require.Equal(t, "boom_type", results["c1"]["error_type"])
	require.Equal(t, "panic", results["c2"]["error_type"])
	require.Equal(t, "unknown_tool", results["c3"]["error_type"])
	require.Equal(t, "invalid_arguments", results["c4"]["error_type"])
	for _, f := range find[protocol.ToolFinishedData](evs) {
		require.Equal(t, protocol.ToolError, f.Status)
	}
}

// TestDisabledToolIsRefusedByName: a tool hidden from the model (Disabled,
// or Available reporting false) is refused when the model calls it anyway;
// its handler never runs, in any mode, and no tool_started is emitted.
func TestDisabledToolIsRefusedByName(t *testing.T) {
	for _, mode := range []permission.Mode{permission.ModeInteractive, permission.ModeAuto} {
		r := newRig(t, mode, nil,
			scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "echo", `{}`), call("c2", "danger", `{}`)}},
			scripted.Response{Text: "done"})
		require.True(t, r.reg.Disable("echo"))
		spec, _ := r.reg.Lookup("danger")
		spec.Available = func() bool { return false }
		r.reg.MustRegister(spec)
		r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
			return permission.OutcomeOnce, nil
		})
		evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
		require.Equal(t, protocol.TurnCompleted, last(evs).Status)
		require.Equal(t, int32(0), r.calls.Load(), "%s: a disabled tool never runs", mode)
		require.Empty(t, find[protocol.ToolStartedData](evs))
		require.Empty(t, find[protocol.PermissionRequiredData](evs), "nothing to approve: the call is refused")
		for _, f := range find[protocol.ToolFinishedData](evs) {
			require.Equal(t, protocol.ToolError, f.Status)
			require.Contains(t, f.ResultPreview, "tool_disabled")
		}
		for _, ts := range r.provider.Requests()[0].Tools {
			require.NotContains(t, []string{"echo", "danger"}, ts.Function.Name, "hidden from the model")
		}
	}
}

func TestResultBudgetSpillsToDisk(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) {
		o.ToolResultDir = dir
		o.ResultMaxChars = 10_000
	}, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "big", `{}`)}}, scripted.Response{Text: "ok"})
	collect(r.eng.Run(context.Background(), engine.Turn{ID: "tb", Input: engine.Input{Text: "go"}}))
	var res string
	for _, m := range r.eng.Messages() {
		if m.Role == llm.RoleTool {
			res = m.Content
		}
	}
	require.Less(t, len(res), 10_000)
	path := filepath.Join(dir, "tb-c1.txt")
	require.Contains(t, res, path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, b, 200_000)
}

// TestBackPressure: the engine makes no progress while the consumer does
// not pull. synctest.Wait proves the absence: it returns once every
// goroutine of the bubble is blocked, so nothing could still be on its way.
func TestBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, permission.ModeInteractive, nil,
			scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"x":"a"}`)}},
			scripted.Response{Text: "done"})
		next, stop := iter.Pull(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
		ev, ok := next()
		require.True(t, ok)
		require.Equal(t, protocol.EventTurnStart, ev.Type)
		// The consumer does not pull: the engine must not reach the model.
		synctest.Wait()
		require.Len(t, r.provider.Requests(), 0)
		for {
			ev, ok = next()
			require.True(t, ok)
			if ev.Type == protocol.EventToolProposed {
				break
			}
		}
		synctest.Wait()
		require.Equal(t, int32(0), r.calls.Load(), "no tool runs while the consumer holds tool_proposed")
		stop() // breaking out stops the turn cleanly
		require.False(t, r.eng.Running())
		require.Len(t, r.provider.Requests(), 1)
		// The history stays valid for the next turn: every call has a result.
		h := r.eng.Messages()
		require.Equal(t, llm.RoleTool, h[len(h)-1].Role)
		r.provider.Append(scripted.Response{Text: "next"})
		evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "again"}}))
		require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	})
}

func TestInterruptDuringStreaming(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{Text: "partial text", Stall: true}, scripted.Response{Text: "after"})
	var evs []engine.Event
	for ev := range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
		evs = append(evs, ev)
		if ev.Type == protocol.EventAssistantDelta {
			r.eng.Interrupt()
		}
	}
	tail := types(evs[len(evs)-2:])
	require.Equal(t, []protocol.EventType{protocol.EventInterrupted, protocol.EventTurnEnd}, tail)
	require.Equal(t, protocol.TurnInterrupted, last(evs).Status)
	require.Equal(t, 1, countTurnEnds(evs))
	for _, m := range r.eng.Messages() {
		require.NotEqual(t, llm.RoleAssistant, m.Role, "a cut-off response is not kept")
	}
	evs = collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "again"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
}

func TestInterruptDuringSlowTool(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "slow", `{}`)}}, scripted.Response{Text: "never"})
	started := make(chan struct{})
	cancelled := make(chan struct{})
	r.reg.MustRegister(tools.Spec{Name: "slow", Schema: schema("slow"), Meta: tools.Metadata{RiskLevel: tools.RiskLow, Class: tools.ClassRead}, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}})
	go func() {
		<-started
		r.eng.Interrupt()
	}()
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	<-cancelled
	require.Equal(t, protocol.TurnInterrupted, last(evs).Status)
	require.Equal(t, protocol.ToolInterrupted, find[protocol.ToolFinishedData](evs)[0].Status)
	require.Len(t, r.provider.Requests(), 1)
}

// TestBreakOutAtToolStartedRunsNothing: a consumer that stops pulling at
// tool_started stops the turn before the tool runs (nobody is left to
// record what it would do).
func TestBreakOutAtToolStartedRunsNothing(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "slow", `{}`)}})
	var ran atomic.Bool
	r.reg.MustRegister(tools.Spec{Name: "slow", Schema: schema("slow"), Meta: tools.Metadata{RiskLevel: tools.RiskLow, Class: tools.ClassRead}, Handler: func(ctx context.Context, c tools.Call) (any, error) {
		ran.Store(true)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	for ev := range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
		if ev.Type == protocol.EventToolStarted {
			break
		}
	}
	require.False(t, ran.Load(), "the tool never started")
	require.False(t, r.eng.Running())
}

func TestSteeringInjectedBetweenIterations(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "echo", `{"x":"a"}`)}},
		scripted.Response{Text: "done"})
	r.eng.QueueSteering("withdrawn", nil, nil)
	require.True(t, r.eng.RemoveSteering("withdrawn"))
	require.False(t, r.eng.RemoveSteering("withdrawn"))
	var evs []engine.Event
	for ev := range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}) {
		evs = append(evs, ev)
		if ev.Type == protocol.EventToolStarted {
			r.eng.QueueSteering("also run the tests", nil, nil)
		}
	}
	st := find[protocol.QueueSteeringData](evs)
	require.Len(t, st, 1)
	require.Equal(t, "also run the tests", st[0].Text)
	second := r.provider.Requests()[1].Messages
	lastMsg := second[len(second)-1]
	require.Equal(t, llm.RoleUser, lastMsg.Role)
	require.Equal(t, "also run the tests", lastMsg.Content)
	require.False(t, r.eng.RemoveSteering("also run the tests"), "already injected")
}

func TestRetryAfterRetriableError(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{Err: "upstream exploded", ErrKind: "server"}, scripted.Response{Text: "second try"})
	require.Empty(t, collect(r.eng.Run(context.Background(), engine.Turn{Kind: engine.TurnRetry})), "nothing to retry yet")
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnError, last(evs).Status)
	e := find[protocol.EventErrorData](evs)[0]
	require.True(t, e.Retriable)
	require.Equal(t, "server", e.ErrorType)
	evs = collect(r.eng.Run(context.Background(), engine.Turn{Kind: engine.TurnRetry}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	h := r.eng.Messages()
	require.Equal(t, "second try", h[len(h)-1].Content)
	users := 0
	for _, m := range h {
		if m.Role == llm.RoleUser {
			users++
		}
	}
	require.Equal(t, 1, users, "retry does not repeat the user message")
}

func TestConfigErrorIsNotRetriable(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.Model = "" })
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnError, last(evs).Status)
	e := find[protocol.EventErrorData](evs)[0]
	require.False(t, e.Retriable)
	require.Equal(t, "config", e.ErrorType)
	require.Contains(t, e.Error, "model")
	require.Empty(t, collect(r.eng.Run(context.Background(), engine.Turn{Kind: engine.TurnRetry})))
}

func TestResumeUnansweredCalls(t *testing.T) {
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "go"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("c1", "echo", `{"x":"done-before"}`), call("c2", "danger", `{}`)}},
		{Role: llm.RoleTool, ToolCallID: "c1", Name: "echo", Content: "echo:done-before"},
	}
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.Messages = history }, scripted.Response{Text: "finished"})
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeOnce, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Kind: engine.TurnResume, ID: "t-old"}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.Equal(t, "t-old", last(evs).TaskID)
	require.Equal(t, int32(1), r.calls.Load(), "only the unanswered call runs")
	require.Empty(t, collect(r.eng.Run(context.Background(), engine.Turn{Kind: engine.TurnResume})), "nothing left to resume")
}

func TestMaxIterations(t *testing.T) {
	loop := scripted.Response{ToolCalls: []llm.ToolCall{call("", "echo", `{"x":"again"}`)}}
	t.Run("plain", func(t *testing.T) {
		r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.MaxIterations = 2 }, loop, loop, loop)
		evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
		require.Equal(t, protocol.TurnMaxIterations, last(evs).Status)
		require.Len(t, r.provider.Requests(), 2)
	})
	t.Run("finalize", func(t *testing.T) {
		r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.MaxIterations = 2; o.FinalizeOnMaxIterations = true }, loop, loop, scripted.Response{Text: "report"})
		evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
		require.Equal(t, protocol.TurnMaxIterations, last(evs).Status)
		reqs := r.provider.Requests()
		require.Len(t, reqs, 3)
		require.Empty(t, reqs[2].Tools, "the final turn has no tools")
		h := r.eng.Messages()
		require.Equal(t, "report", h[len(h)-1].Content)
	})
}

type panicHook struct {
	engine.BaseHook
	ended atomic.Bool
}

func (*panicHook) OnToolStarted(string)              { panic("hook bug") }
func (*panicHook) OnAssistantDelta(string)           { panic("hook bug") }
func (h *panicHook) OnTurnEnd(string, int, []string) { h.ended.Store(true) }

func TestHookPanicsDoNotStopTheTurn(t *testing.T) {
	h := &panicHook{}
	other := &panicHook{}
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) { o.Hook = engine.CompositeHook{h, other} },
		scripted.Response{Text: "text", ToolCalls: []llm.ToolCall{call("c1", "echo", `{}`)}}, scripted.Response{Text: "done"})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.True(t, h.ended.Load())
	require.True(t, other.ended.Load(), "a panic in one hook does not starve the next")
}

func TestConcurrentRunRefused(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{Text: "slow", Stall: true})
	inFlight := make(chan struct{})
	var wg sync.WaitGroup
	var first []engine.Event
	wg.Go(func() {
		for ev := range r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "first"}}) {
			first = append(first, ev)
			if ev.Type == protocol.EventLLMRequest {
				close(inFlight)
			}
		}
	})
	<-inFlight
	before := r.eng.Messages()
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "second"}}))
	require.Equal(t, []protocol.EventType{protocol.EventError, protocol.EventTurnEnd}, types(evs))
	require.Equal(t, "busy", find[protocol.EventErrorData](evs)[0].ErrorType)
	require.Equal(t, before, r.eng.Messages(), "the refused run leaves the history alone")
	r.eng.Interrupt()
	wg.Wait()
	require.Equal(t, protocol.TurnInterrupted, last(first).Status)
}

// fakeHandlers answers interactive tools.
type fakeHandlers struct {
	requestIDs []string
}

func (f *fakeHandlers) AskUser(ctx context.Context, callID string, q tools.Question) (string, error) {
	f.requestIDs = append(f.requestIDs, engine.RequestID(ctx))
	return "blue", nil
}

func (f *fakeHandlers) ProposePlan(ctx context.Context, callID string, p tools.Plan) (tools.PlanAnswer, error) {
	f.requestIDs = append(f.requestIDs, engine.RequestID(ctx))
	return tools.PlanAnswer{Approved: false, Feedback: "smaller steps"}, nil
}

func (f *fakeHandlers) RequestDirectory(ctx context.Context, callID string, d tools.DirRequest) (tools.DirAnswer, error) {
	return tools.DirAnswer{}, errors.New("not used")
}

func TestInteractiveToolsEmitRequestEvents(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("q1", "ask_user", `{"question":"color?","options":["red","blue"]}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("p1", "propose_plan", `{"plan":"1. do it"}`)}},
		scripted.Response{Text: "ok"})
	interact.RegisterAskTool(r.reg, r.eng.Interactor())
	interact.RegisterPlanTool(r.reg, r.eng.Interactor())
	h := &fakeHandlers{}
	r.eng.SetInteractor(h)
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	q := find[protocol.AskUserQuestionData](evs)
	require.Len(t, q, 1)
	require.Equal(t, "color?", q[0].Question)
	require.Equal(t, "q1", q[0].ReqID)
	p := find[protocol.PlanProposedData](evs)
	require.Len(t, p, 1)
	require.Equal(t, []string{q[0].RequestID, p[0].RequestID}, h.requestIDs, "handlers see the events' request ids")
	var toolResults []string
	for _, m := range r.eng.Messages() {
		if m.Role == llm.RoleTool {
			toolResults = append(toolResults, m.Content)
		}
	}
	require.Contains(t, toolResults[0], "blue")
	require.Contains(t, toolResults[1], "smaller steps")
}

func TestInteractiveWithoutHandlerIsToolError(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("q1", "ask_user", `{"question":"?"}`)}}, scripted.Response{Text: "ok"})
	interact.RegisterAskTool(r.reg, r.eng.Interactor())
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.Equal(t, protocol.ToolError, find[protocol.ToolFinishedData](evs)[0].Status)
}

// Messages shares the history with the engine, so the engine never changes
// a message in place: a snapshot a reader holds (a checkpoint being
// encoded, a request being sent) keeps its content when the system prompt
// changes, when the next turn strips the last one's attachments and when
// later turns append. Requests carry one conversation name.
func TestMessagesSnapshotNeverChanges(t *testing.T) {
	r := newRig(t, permission.ModeInteractive, nil, scripted.Response{Text: "one"}, scripted.Response{Text: "two"})
	att := []llm.Attachment{{Name: "a.png", MimeType: "image/png", DataURL: "data:image/png;base64,AAAA"}}
	collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "first", Attachments: att}}))
	snap := r.eng.Messages()
	want := slices.Clone(snap)
	require.Len(t, want[1].Attachments, 1)

	r.eng.SetSystemPrompt("You are another test.")
	collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "second"}}))
	require.Equal(t, want, snap, "the snapshot kept its messages")

	now := r.eng.Messages()
	require.Equal(t, "You are another test.", now[0].Content)
	require.Empty(t, now[1].Attachments, "older attachments are stripped in the engine's history")
	require.Len(t, now, len(snap)+2)

	reqs := r.provider.Requests()
	require.Len(t, reqs, 2)
	require.NotEmpty(t, reqs[0].Conversation)
	require.Equal(t, reqs[0].Conversation, reqs[1].Conversation)
}
