package wsrpc

import (
	"encoding/json"
	"testing"

	"github.com/zqagent/sidecar/protocol"

	"github.com/stretchr/testify/require"
)

func TestParseFrame(t *testing.T) {
	cases := []struct {
		frame  string
		batch  bool
		n      int
		code   int // of the first item, 0 = valid
		notify bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"a"}`, false, 1, 0, false},
		{`{"jsonrpc":"2.0","id":"x","method":"a","params":{"k":1}}`, false, 1, 0, false},
		{`{"jsonrpc":"2.0","method":"a"}`, false, 1, 0, true},
		{`{"jsonrpc":"2.0","id":null,"method":"a"}`, false, 1, 0, false},
		{`  {"jsonrpc":"2.0","id":1,"method":"a"}  `, false, 1, 0, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]`, true, 2, 0, false},
		{`{`, false, 1, CodeParseError, false},
		{``, false, 1, CodeParseError, false},
		{`[]`, false, 1, CodeInvalidRequest, false},
		{`"str"`, false, 1, CodeInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":true,"method":"a"}`, false, 1, CodeInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, false, 1, CodeInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, false, 1, CodeInvalidRequest, false},
		{`{"id":1,"method":"a"}`, false, 1, CodeInvalidRequest, false},
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":"x"}`, false, 1, CodeInvalidRequest, false},
		{`[1]`, true, 1, CodeInvalidRequest, false},
	}
	for _, tc := range cases {
		items, batch := parseFrame([]byte(tc.frame))
		require.Equal(t, tc.batch, batch, tc.frame)
		require.Len(t, items, tc.n, tc.frame)
		if tc.code == 0 {
			require.Nil(t, items[0].err, tc.frame)
			require.Equal(t, tc.notify, items[0].req.isNotification(), tc.frame)
		} else {
			require.NotNil(t, items[0].err, tc.frame)
			require.Equal(t, tc.code, items[0].err.Code, tc.frame)
		}
	}
	big := "["
	for i := range MaxBatch + 1 {
		if i > 0 {
			big += ","
		}
		big += `{"jsonrpc":"2.0","id":1,"method":"a"}`
	}
	items, _ := parseFrame([]byte(big + "]"))
	require.Len(t, items, 1)
	require.Equal(t, CodeInvalidRequest, items[0].err.Code)
}

func FuzzParseFrame(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"a","params":{}}`, `[{"jsonrpc":"2.0","method":"x"}]`, `{`, `[]`, `null`, `{"id":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, _ := parseFrame(data)
		if len(items) == 0 {
			t.Fatal("no item")
		}
		// In-place parsing agrees with encoding/json on what is JSON.
		parseErr := len(items) == 1 && items[0].err != nil && items[0].err.Code == CodeParseError
		if json.Valid(data) == parseErr {
			t.Fatalf("json.Valid %v, parse error %v", json.Valid(data), parseErr)
		}
		for _, it := range items {
			if (it.req == nil) == (it.err == nil) {
				t.Fatal("exactly one of req and err must be set")
			}
			// Every answer encodes to valid JSON.
			if it.err != nil && !json.Valid(encodeError(it.id, it.err)) {
				t.Fatal("invalid error answer")
			}
			if it.req != nil {
				if it.req.Method == "" {
					t.Fatal("empty method accepted")
				}
				if b, err := encodeResult(it.req.ID, nil); err != nil || (!it.req.isNotification() && !json.Valid(b)) {
					t.Fatal("invalid result answer")
				}
			}
		}
	})
}

func TestDecodeParams(t *testing.T) {
	type P struct {
		SessionID string   `json:"sessionId" rpc:"required"`
		AfterSeq  int64    `json:"afterSeq"`
		Tags      []string `json:"tags"`
	}
	var p P
	require.NoError(t, protocol.DecodeParams(json.RawMessage(`{"sessionId":"s","afterSeq":3}`), &p))
	require.Equal(t, P{SessionID: "s", AfterSeq: 3}, p)
	cases := map[string]string{
		``:                                 "sessionId: required",
		`null`:                             "sessionId: required",
		`[]`:                               "must be an object",
		`{"sessionId":1}`:                  "sessionId: expected string",
		`{"sessionId":"s","afterSeq":"x"}`: "afterSeq: expected integer",
		`{"sessionId":"s","tags":"x"}`:     "tags: expected array",
		`{"sessionId":""}`:                 "sessionId: required",
	}
	for in, want := range cases {
		var p P
		err := protocol.DecodeParams(json.RawMessage(in), &p)
		require.ErrorIs(t, err, ErrInvalidParams, in)
		require.Contains(t, err.Error(), want, in)
		require.Equal(t, CodeInvalidParams, WireErrorOf(err, nil).Code)
	}
}

func TestWireErrorMapping(t *testing.T) {
	require.Equal(t, CodeNotFound, WireErrorOf(ErrNotFound, nil).Code)
	require.Equal(t, CodeConflict, WireErrorOf(ErrConflict, nil).Code)
	we := &WireError{Code: CodeNotFound, Message: "x"}
	require.ErrorIs(t, we, ErrNotFound)
	require.NotErrorIs(t, we, ErrConflict)
}

// TestNotificationEnvelopeIsTheEncoders: head + encoded params + tail are
// the bytes EncodeNotification makes of them.
func TestNotificationEnvelopeIsTheEncoders(t *testing.T) {
	for _, tc := range []struct {
		method string
		params string
	}{
		{"session.event", `{"sessionId":"s","seq":1,"type":"turn_end","data":{},"time":"2026-01-01T00:00:00Z"}`},
		{"terminal.output", `{"terminalId":"t","seq":0,"data":"aGk="}`},
		{"odd\"method", `{}`},
		{"mcp.status", `[1,2]`},
	} {
		want, err := EncodeNotification(tc.method, json.RawMessage(tc.params))
		require.NoError(t, err)
		head, tail := NotificationEnvelope(tc.method)
		require.Equal(t, string(want), string(head)+tc.params+string(tail))
	}
}
