package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// elicitHandlers answers elicitations (and is the engine's interactor).
type elicitHandlers struct {
	fakeHandlers
	requestIDs []string
	got        []tools.Elicitation
}

func (f *elicitHandlers) Elicit(ctx context.Context, el tools.Elicitation) (tools.ElicitationAnswer, error) {
	f.requestIDs = append(f.requestIDs, engine.RequestID(ctx))
	f.got = append(f.got, el)
	return tools.ElicitationAnswer{Action: "accept", Content: json.RawMessage(`{"name":"Ada"}`)}, nil
}

// TestToolCallElicits: a tool's context carries the engine's Elicitor; an
// elicitation through it emits elicitation_requested for the call (its
// reqId, a fresh requestId, the card's fields and text warnings) before the
// host's handler is asked with that request id, and the answer comes back
// to the tool.
func TestToolCallElicits(t *testing.T) {
	r := newRig(t, permission.ModeAuto, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("m1", "asker", `{}`)}},
		scripted.Response{Text: "ok"})
	meta := tools.Metadata{Category: "test", RiskLevel: tools.RiskLow, Class: tools.ClassRead}
	var answer tools.ElicitationAnswer
	r.reg.MustRegister(tools.Spec{Name: "asker", Schema: schema("asker"), Meta: meta, Handler: func(ctx context.Context, _ tools.Call) (any, error) {
		el := tools.ElicitorFrom(ctx)
		require.NotNil(t, el, "the call's context carries the Elicitor")
		var err error
		answer, err = el.Elicit(ctx, tools.Elicitation{Server: "srv", Message: "Name?\u202e", Mode: "form", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
		return "asked", err
	}})
	h := &elicitHandlers{}
	r.eng.SetInteractor(h)
	evs := collect(r.eng.Run(context.Background(), engine.Turn{ID: "t1", Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	cards := find[protocol.ElicitationRequestedData](evs)
	require.Len(t, cards, 1)
	c := cards[0]
	require.Equal(t, "t1", c.TaskID)
	require.Equal(t, "m1", c.ReqID)
	require.NotEmpty(t, c.RequestID)
	require.Equal(t, "srv", c.Server)
	require.Equal(t, "form", c.Mode)
	require.JSONEq(t, `{"type":"object","properties":{}}`, string(c.RequestedSchema))
	require.Equal(t, []protocol.TextWarning{{Field: "message", Kind: protocol.WarnBidi}}, c.Warnings)
	require.Equal(t, []string{c.RequestID}, h.requestIDs, "the handler is asked with the card's request id")
	require.Equal(t, "accept", answer.Action)
	require.JSONEq(t, `{"name":"Ada"}`, string(answer.Content))
}

// TestElicitWithoutAnElicitingHost: an interactor that cannot elicit makes
// the elicitation fail before any card is shown.
func TestElicitWithoutAnElicitingHost(t *testing.T) {
	r := newRig(t, permission.ModeAuto, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("m1", "asker", `{}`)}},
		scripted.Response{Text: "ok"})
	meta := tools.Metadata{Category: "test", RiskLevel: tools.RiskLow, Class: tools.ClassRead}
	var err error
	r.reg.MustRegister(tools.Spec{Name: "asker", Schema: schema("asker"), Meta: meta, Handler: func(ctx context.Context, _ tools.Call) (any, error) {
		_, err = tools.ElicitorFrom(ctx).Elicit(ctx, tools.Elicitation{Server: "srv", Message: "m", Mode: "form"})
		return "asked", nil
	}})
	r.eng.SetInteractor(&fakeHandlers{})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{ID: "t1", Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.ErrorIs(t, err, engine.ErrNoInteractor)
	require.Empty(t, find[protocol.ElicitationRequestedData](evs))
}
