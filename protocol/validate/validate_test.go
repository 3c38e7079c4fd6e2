package validate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol/validate"
)

func TestFrames(t *testing.T) {
	v, err := validate.New()
	require.NoError(t, err)
	ev := func(typ, data string) string {
		return `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","seq":1,"turnId":"t","type":"` + typ + `","data":` + data + `,"time":"2026-12-01T10:00:00.5Z"}}`
	}
	turnEnd := `{"taskId":"t","status":"completed","iterations":1,"produced_files":[]}`
	for _, tc := range []struct {
		name, method, frame string
		ok                  bool
	}{
		{"event", "", ev("turn_end", turnEnd), true},
		{"event data of another type", "", ev("turn_end", `{"taskId":"t","text":"hi","reqId":"r"}`), false},
		{"event with an unknown status", "", ev("turn_end", `{"taskId":"t","status":"done","iterations":1,"produced_files":[]}`), false},
		{"event with null produced_files", "", ev("turn_end", `{"taskId":"t","status":"completed","iterations":1,"produced_files":null}`), false},
		{"unknown event type", "", ev("turn_party", `{}`), false},
		{"bad time", "", `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","seq":1,"type":"turn_end","data":` + turnEnd + `,"time":"yesterday"}}`, false},
		{"unknown notification", "", `{"jsonrpc":"2.0","method":"session.party","params":{}}`, false},
		{"terminal output", "", `{"jsonrpc":"2.0","method":"terminal.output","params":{"terminalId":"term_1","seq":0,"data":"aGk="}}`, true},
		{"terminal output not base64", "", `{"jsonrpc":"2.0","method":"terminal.output","params":{"terminalId":"term_1","seq":0,"data":"h!"}}`, false},
		{"result", "turn.start", `{"jsonrpc":"2.0","id":3,"result":{"turnId":"t","queued":0}}`, true},
		{"result with an extra field", "turn.start", `{"jsonrpc":"2.0","id":3,"result":{"turnId":"t","queued":0,"x":1}}`, false},
		{"result missing a field", "turn.start", `{"jsonrpc":"2.0","id":3,"result":{"turnId":"t"}}`, false},
		{"result of an unknown call", "", `{"jsonrpc":"2.0","id":3,"result":{"anything":1}}`, true},
		{"result of a method not in the schema", "turn.party", `{"jsonrpc":"2.0","id":3,"result":{}}`, false},
		{"error", "turn.start", `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: sessionId: required","data":{"kind":"required","field":"sessionId"}}}`, true},
		{"error without data", "turn.start", `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: sessionId: required"}}`, false},
		{"error with an unknown kind", "turn.start", `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"m","data":{"kind":"oops"}}}`, false},
		{"error without a message", "turn.start", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}`, false},
		{"batch", "", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":{"kind":"method_not_found"}}}]`, true},
		{"batch with a bad element", "", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"1.0","id":2,"result":{}}]`, false},
		{"grant with a null time", "session.grants", `{"jsonrpc":"2.0","id":1,"result":{"grants":[{"kind":"tool","name":"write_file","grantedAt":null}]}}`, true},
		{"pending request of the wrong data", "session.subscribe", `{"jsonrpc":"2.0","id":1,"result":{"lastSeq":1,"running":false,"clients":[],"pendingRequests":[{"requestId":"r","kind":"question","turnId":"t","seq":1,"data":` + turnEnd + `,"createdAt":"2026-12-01T10:00:00Z"}]}}`, false},
		{"not JSON", "", `{`, false},
	} {
		err := v.Frame(tc.method, []byte(tc.frame))
		if tc.ok {
			require.NoError(t, err, tc.name)
		} else {
			require.Error(t, err, tc.name)
		}
	}
}

func TestParams(t *testing.T) {
	v, err := validate.New()
	require.NoError(t, err)
	require.NoError(t, v.Params("initialize", []byte(`{"protocolVersion":1}`)))
	require.NoError(t, v.Params("initialize", []byte(`{"protocolVersion":{"min":1,"max":2},"client":{"name":"a","version":"1"}}`)))
	require.Error(t, v.Params("initialize", []byte(`{}`)))
	require.Error(t, v.Params("initialize", []byte(`{"protocolVersion":"1"}`)))
	require.NoError(t, v.Params("request.respond", []byte(`{"sessionId":"s","requestId":"r","response":{"outcome":"once"}}`)))
	require.Error(t, v.Params("session.setMode", []byte(`{"sessionId":"s","mode":"yolo"}`)))
}

// TestClientMode: what a newer sidecar of protocol version 1 may add
// (ui-protocol.md §3) passes the schema read as a client does, and fails it
// read exactly, the way the sidecar's own frames are checked; what would
// break a client fails both.
func TestClientMode(t *testing.T) {
	exact, err := validate.New()
	require.NoError(t, err)
	client, err := validate.NewClient()
	require.NoError(t, err)
	ev := func(typ, data string) string {
		return `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","seq":1,"turnId":"t","type":"` + typ + `","data":` + data + `,"time":"2026-12-01T10:00:00.5Z"}}`
	}
	pending := func(kind, data string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"lastSeq":1,"running":true,"clients":[],"pendingRequests":[{"requestId":"r","kind":"` + kind + `","turnId":"t","seq":1,"data":` + data + `,"createdAt":"2026-12-01T10:00:00Z"}]}}`
	}
	perm := `{"taskId":"t","reqId":"c1","requestId":"perm_1","name":"run_shell","arguments":{},"reason":"r","category":"shell","command":"ls","alwaysCommand":false}`
	require.NoError(t, exact.Frame("session.subscribe", []byte(pending("approval", perm))), "the approval fixture is right")
	for _, tc := range []struct {
		name, method, frame string
	}{
		{"a new member in a result", "turn.start", `{"jsonrpc":"2.0","id":3,"result":{"turnId":"t","queued":0,"x":1}}`},
		{"a new member in a nested result object", "session.grants", `{"jsonrpc":"2.0","id":1,"result":{"grants":[{"kind":"tool","name":"write_file","grantedAt":null,"by":"me"}]}}`},
		{"a new member in event data", "", ev("turn_end", `{"taskId":"t","status":"completed","iterations":1,"produced_files":[],"cost":{"usd":0.1}}`)},
		{"a new member in the event envelope", "", `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","seq":1,"type":"turn_end","data":{"taskId":"t","status":"completed","iterations":1,"produced_files":[]},"time":"2026-12-01T10:00:00Z","origin":"acp"}}`},
		{"a new member in a notification", "", `{"jsonrpc":"2.0","method":"terminal.exit","params":{"terminalId":"term_1","exitCode":0,"signal":"TERM"}}`},
		{"a new member in error.data", "turn.start", `{"jsonrpc":"2.0","id":3,"error":{"code":-32003,"message":"m","data":{"kind":"busy","retryAfterMs":5}}}`},
		{"a new event type", "", ev("future_event", `{"requests":{"limit":10}}`)},
		{"a new request kind", "session.subscribe", pending("future_kind", `{"server":"s","message":"m"}`)},
		{"a new feature and event type in capabilities", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"server":{"name":"zqagent-sidecar","version":"9","build":"x"},"protocolVersion":1,"capabilities":{"methods":["future.method"],"eventTypes":["turn_start","future_event"],"features":["vcs","mcpOAuth"],"protocolVersions":{"min":1,"max":1,"x":0},"maxFrameBytes":1,"maxBatch":1,"provider":"demo","languages":["en"],"defaultLang":"en"}}}`},
		{"a new error kind", "turn.start", `{"jsonrpc":"2.0","id":3,"error":{"code":-32003,"message":"m","data":{"kind":"rate_limited"}}}`},
		{"a new notification", "", `{"jsonrpc":"2.0","method":"session.future","params":{"sessionId":"s"}}`},
	} {
		require.NoError(t, client.Frame(tc.method, []byte(tc.frame)), "client: %s", tc.name)
		require.Error(t, exact.Frame(tc.method, []byte(tc.frame)), "exact: %s", tc.name)
	}
	for _, tc := range []struct {
		name, method, frame string
	}{
		{"a known event type with another type's data", "", ev("turn_end", `{"taskId":"t","text":"hi","reqId":"r"}`)},
		{"a required member missing", "turn.start", `{"jsonrpc":"2.0","id":3,"result":{"turnId":"t"}}`},
		{"a closed enum's unknown value", "", ev("turn_end", `{"taskId":"t","status":"done","iterations":1,"produced_files":[]}`)},
		{"a known request kind with another kind's data", "session.subscribe", pending("question", perm)},
		{"an event type that is not a string", "", ev(`"+1+"`, `{}`)},
		{"event data that is not an object", "", ev("future_event", `[]`)},
		{"a new member in the JSON-RPC envelope", "turn.start", `{"jsonrpc":"2.0","id":3,"result":{"turnId":"t","queued":0},"x":1}`},
		{"a notification without params", "", `{"jsonrpc":"2.0","method":"session.future"}`},
	} {
		require.Error(t, client.Frame(tc.method, []byte(tc.frame)), "client: %s", tc.name)
		require.Error(t, exact.Frame(tc.method, []byte(tc.frame)), "exact: %s", tc.name)
	}
}

// TestParamsStayClosed: what a client sends is held to the listed members
// in both modes, also inside the types params share with results (a
// client's typo is caught before the sidecar ignores it).
func TestParamsStayClosed(t *testing.T) {
	for _, mk := range []func() (*validate.Validator, error){validate.New, validate.NewClient} {
		v, err := mk()
		require.NoError(t, err)
		require.NoError(t, v.Params("initialize", []byte(`{"protocolVersion":{"min":1,"max":1},"client":{"name":"a","version":"1"}}`)))
		require.Error(t, v.Params("session.get", []byte(`{"sessionId":"s","x":1}`)))
		require.Error(t, v.Params("initialize", []byte(`{"protocolVersion":1,"client":{"name":"a","version":"1","x":1}}`)), "ClientInfo in params")
		require.Error(t, v.Params("initialize", []byte(`{"protocolVersion":{"min":1,"max":1,"x":1}}`)), "VersionRange in params")
		require.NoError(t, v.Params("providers.set", []byte(`{"name":"p","retry":{"maxRetries":1}}`)))
		require.Error(t, v.Params("providers.set", []byte(`{"name":"p","retry":{"maxRetries":1,"x":1}}`)), "RetrySettings in params")
		require.Error(t, v.Params("session.setMode", []byte(`{"sessionId":"s","mode":"yolo"}`)))
	}
}
