package protocol_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
)

// engineData are the engine's event data types, by type.
var engineData = map[engine.EventType]any{
	engine.EventTurnStart:          engine.TurnStartData{},
	engine.EventAssistantDelta:     engine.DeltaData{},
	engine.EventReasoningDelta:     engine.DeltaData{},
	engine.EventAssistantMessage:   engine.AssistantMessageData{},
	engine.EventToolProposed:       engine.ToolProposedData{},
	engine.EventPermissionRequired: engine.PermissionRequiredData{},
	engine.EventToolStarted:        engine.ToolStartedData{},
	engine.EventToolFinished:       engine.ToolFinishedData{},
	engine.EventIterationEnd:       engine.IterationEndData{},
	engine.EventTurnEnd:            engine.TurnEndData{},
	engine.EventError:              engine.ErrorData{},
	engine.EventInterrupted:        engine.InterruptedData{},
	engine.EventCompacting:         engine.CompactingData{},
	engine.EventCompacted:          engine.CompactedData{},
	engine.EventQueueSteering:      engine.QueueSteeringData{},
	engine.EventLLMRequest:         engine.LLMRequestData{},
	engine.EventAskUserQuestion:    engine.AskUserQuestionData{},
	engine.EventPlanProposed:       engine.PlanProposedData{},
	engine.EventDirectoryRequested: engine.DirectoryRequestedData{},
	engine.EventLLMRetry:           engine.LLMRetryData{},
	engine.EventSessionNamed:       engine.SessionNamedData{},
	engine.EventTurnSuspended:      engine.TurnSuspendedData{},
}

// optionalOnWire are fields the engine always writes that another writer of
// the same event type leaves out (the host's interrupted that ends a
// suspended turn has no reqId).
var optionalOnWire = map[protocol.EventType][]string{
	protocol.EventInterrupted: {"reqId"},
}

// TestEventDataMatchesEngine: the engine writes the events, the protocol
// describes them; each event type's data has the same JSON fields (name,
// optional or not, JSON kind), recursively.
func TestEventDataMatchesEngine(t *testing.T) {
	var types []engine.EventType
	for _, e := range protocol.Events() {
		types = append(types, engine.EventType(e.Type))
		ed, ok := engineData[engine.EventType(e.Type)]
		require.True(t, ok, "engine has no data type for %s", e.Type)
		want := jsonShape(reflect.TypeOf(ed)).(map[string]any)
		for _, f := range optionalOnWire[e.Type] {
			want[f+"?"] = want[f]
			delete(want, f)
		}
		require.Equal(t, want, jsonShape(reflect.TypeOf(e.Data)), "%s: engine.%T vs protocol.%T", e.Type, ed, e.Data)
	}
	require.Equal(t, engine.AllEventTypes, types, "the event types, in order")
	require.Len(t, engineData, len(types))
}

// jsonShape describes how a type marshals: field name → "kind" or
// "kind?" (omitempty), structs recursively.
func jsonShape(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.PkgPath() == "time" {
			return "time"
		}
		out := map[string]any{}
		addFields(t, out)
		return out
	case reflect.Slice, reflect.Array:
		return []any{jsonShape(t.Elem())}
	case reflect.Map:
		return map[string]any{"*": jsonShape(t.Elem())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Interface:
		return "any"
	}
	return t.Kind().String()
}

func addFields(t reflect.Type, out map[string]any) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			addFields(ft, out)
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") {
			name += "?"
		}
		out[name] = jsonShape(f.Type)
	}
}
