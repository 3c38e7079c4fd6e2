package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
)

// TestEventsRecordedBeforeOneVocabulary: the store holds event data the
// engine wrote with its own types before it emitted protocol's (issue 26).
// testdata/events-before-26.jsonl is that code's JSON of every event type,
// once with zero values and once with every field set; each decodes
// strictly into protocol's type and marshals back to the same bytes. The
// one difference: an interrupted with no model request had "reqId":"",
// which is now absent, as on the interrupted the host records.
func TestEventsRecordedBeforeOneVocabulary(t *testing.T) {
	data := map[protocol.EventType]reflect.Type{}
	for _, e := range protocol.Events() {
		data[e.Type] = reflect.TypeOf(e.Data)
	}
	f, err := os.Open("testdata/events-before-26.jsonl")
	require.NoError(t, err)
	defer f.Close()
	seen := map[protocol.EventType]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Type protocol.EventType `json:"type"`
			Data json.RawMessage    `json:"data"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		typ, ok := data[rec.Type]
		require.True(t, ok, "unknown event type %s", rec.Type)
		v := reflect.New(typ)
		dec := json.NewDecoder(bytes.NewReader(rec.Data))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(v.Interface()), "%s: %s", rec.Type, rec.Data)
		b, err := json.Marshal(v.Elem().Interface())
		require.NoError(t, err)
		want := rec.Data
		if rec.Type == protocol.EventInterrupted {
			want = bytes.Replace(want, []byte(`,"reqId":""`), nil, 1)
		}
		require.Equal(t, string(want), string(b), "%s", rec.Type)
		seen[rec.Type]++
	}
	require.NoError(t, sc.Err())
	for _, typ := range protocol.EventTypes() {
		if newerThan26[typ] {
			require.Zero(t, seen[typ], typ)
			continue
		}
		require.Equal(t, 2, seen[typ], "%s: a zero and a full record", typ)
	}
}

// newerThan26 are the event types added after the engine emitted
// protocol's types: no store holds one written with other types.
var newerThan26 = map[protocol.EventType]bool{protocol.EventUsage: true, protocol.EventRateLimits: true, protocol.EventQueueChanged: true, protocol.EventRequestResolved: true,
	protocol.EventElicitationRequested: true,
	protocol.EventSessionRewound:       true, protocol.EventRewindInterrupted: true}

// TestEventDataCarryTheirTurn: every event data type is an EventData whose
// EventTaskID is its taskId.
func TestEventDataCarryTheirTurn(t *testing.T) {
	for _, e := range protocol.Events() {
		v := reflect.New(reflect.TypeOf(e.Data)).Elem()
		v.FieldByName("TaskID").SetString("t-" + string(e.Type))
		d, ok := v.Interface().(protocol.EventData)
		require.True(t, ok, "%T is not an EventData", e.Data)
		require.Equal(t, "t-"+string(e.Type), d.EventTaskID())
	}
	require.True(t, protocol.EventPlanProposed.Interactive())
	require.False(t, protocol.EventToolStarted.Interactive())
}
