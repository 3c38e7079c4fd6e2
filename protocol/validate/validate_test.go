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
		{"pending request of the wrong data", "session.subscribe", `{"jsonrpc":"2.0","id":1,"result":{"lastSeq":1,"running":false,"pendingRequests":[{"requestId":"r","kind":"question","turnId":"t","seq":1,"data":` + turnEnd + `,"createdAt":"2026-12-01T10:00:00Z"}]}}`, false},
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
