package backend

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/zqagent/sidecar/store"
)

// appendEventParams appends the params of a session.event notification
// (protocol.SessionEvent) to b; the transport's envelope goes around them
// (Options.Envelope). It is the hot path of streaming (one frame
// per delta), so it appends by hand instead of running encoding/json over
// the already-encoded data a second time. The output is the same JSON that
// encoding/json produces for the event.
func appendEventParams(b []byte, ev store.Event) []byte {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	b = append(b, `{"sessionId":`...)
	b = AppendJSONString(b, ev.SessionID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, ev.Seq, 10)
	if ev.TurnID != "" {
		b = append(b, `,"turnId":`...)
		b = AppendJSONString(b, ev.TurnID)
	}
	b = append(b, `,"type":`...)
	b = AppendJSONString(b, ev.Type)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	b = append(b, `,"time":"`...)
	b = ev.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `"}`...)
	return b
}

// AppendJSONString appends s as a JSON string; plain printable ASCII (ids,
// event types) is copied as is, anything else goes through encoding/json.
func AppendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
