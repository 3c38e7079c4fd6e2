package backend

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/store"
)

func TestEventFrameMatchesEncoder(t *testing.T) {
	evs := []store.Event{
		{SessionID: "s1", Seq: 1, TurnID: "turn_1", Type: "assistant_delta", Data: json.RawMessage(`{"text":"hi <b>","reqId":"r"}`), Time: time.Date(2026, 11, 30, 15, 0, 0, 123000000, time.UTC)},
		{SessionID: "s\"2\u2028", Seq: 99, Type: "session_named", Data: json.RawMessage(`{"name":"x"}`), Time: time.Unix(1, 0).UTC()},
		{SessionID: "s3", Seq: 3, TurnID: "t", Type: "turn_end", Time: time.Unix(2, 5).UTC()},
	}
	for _, ev := range evs {
		want, err := wsrpc.EncodeNotification("session.event", ev)
		require.NoError(t, err)
		got := newEnvelope(wsrpc.NotificationEnvelope, "session.event").frame(0, func(b []byte) []byte { return appendEventParams(b, ev) })
		require.True(t, json.Valid(got), string(got))
		var a, b any
		require.NoError(t, json.Unmarshal(want, &a))
		require.NoError(t, json.Unmarshal(got, &b))
		if len(ev.Data) == 0 {
			// encoding/json writes null for empty data; the frame writes {}.
			a.(map[string]any)["params"].(map[string]any)["data"] = map[string]any{}
		}
		require.Equal(t, a, b)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("turn_abc")
	f.Add("a\"b\\c\n\u2028<>&\xff")
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q → %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var w string
		_ = json.Unmarshal(want, &w)
		if back != w {
			t.Fatalf("%q round-trips to %q, want %q", s, back, w)
		}
	})
}
