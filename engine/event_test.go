package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/interact"
)

// TestEventsAreProtocolTypes: the engine emits the protocol's event types
// (one vocabulary, issue 26): each event's data is the type protocol.Events
// registers for its type, and its JSON decodes strictly back into it.
func TestEventsAreProtocolTypes(t *testing.T) {
	want := map[protocol.EventType]reflect.Type{}
	for _, e := range protocol.Events() {
		want[e.Type] = reflect.TypeOf(e.Data)
	}
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{Text: "let me look", Reasoning: "hm", Usage: &llm.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5},
			ToolCalls: []llm.ToolCall{call("c1", "echo", `{"x":"a"}`), call("c2", "danger", `{}`), call("c3", "fail", `{}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("q1", "ask_user", `{"question":"color?","options":["red","blue"]}`)}},
		scripted.Response{Text: "done"})
	interact.RegisterAskTool(r.reg, r.eng.Interactor())
	r.eng.SetInteractor(&fakeHandlers{})
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeDeny, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{ID: "t1", Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)

	seen := map[protocol.EventType]bool{}
	for _, ev := range evs {
		seen[ev.Type] = true
		typ, ok := want[ev.Type]
		require.True(t, ok, "%s is not a protocol event type", ev.Type)
		require.Equal(t, typ, reflect.TypeOf(ev.Data), "%s: the data is %T", ev.Type, ev.Data)
		b, err := ev.MarshalData()
		require.NoError(t, err)
		back := reflect.New(typ)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(back.Interface()), "%s: %s", ev.Type, b)
		again, err := json.Marshal(back.Elem().Interface())
		require.NoError(t, err)
		require.Equal(t, string(b), string(again), "%s round-trips byte for byte", ev.Type)
		require.Equal(t, "t1", ev.TaskID(), "%s", ev.Type)
	}
	for _, typ := range []protocol.EventType{
		protocol.EventTurnStart, protocol.EventLLMRequest, protocol.EventReasoningDelta, protocol.EventAssistantDelta,
		protocol.EventAssistantMessage, protocol.EventToolProposed, protocol.EventPermissionRequired,
		protocol.EventToolStarted, protocol.EventToolFinished, protocol.EventIterationEnd,
		protocol.EventAskUserQuestion, protocol.EventTurnEnd,
	} {
		require.True(t, seen[typ], "the turn emitted no %s", typ)
	}
}
