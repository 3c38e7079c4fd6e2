package wsrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
)

// TestWireErrorData: the code, the message and error.data of handler errors.
func TestWireErrorData(t *testing.T) {
	errStale := errors.New("stale")
	errOther := errors.New("other conflict")
	extra := []ErrCode{{Err: errStale, Code: CodeConflict, Kind: protocol.KindStaleHash}, {Err: errOther, Code: CodeConflict}}
	type params struct {
		SessionID string `json:"sessionId" rpc:"required"`
		AfterSeq  int64  `json:"afterSeq"`
	}
	decode := func(raw string) error { var p params; return protocol.DecodeParams(json.RawMessage(raw), &p) }
	for _, tc := range []struct {
		name string
		err  error
		code int
		msg  string
		data protocol.ErrorData
	}{
		{"required", decode(`{}`), CodeInvalidParams, "invalid params: sessionId: required",
			protocol.ErrorData{Kind: protocol.KindRequired, Field: "sessionId"}},
		{"wrong type", decode(`{"sessionId":"s","afterSeq":"x"}`), CodeInvalidParams, "invalid params: afterSeq: expected integer, got string",
			protocol.ErrorData{Kind: protocol.KindWrongType, Field: "afterSeq", Expected: "integer"}},
		{"bad value, wrapped", fmt.Errorf("provider: %w", protocol.InvalidField("name", "too long")), CodeInvalidParams, "provider: invalid params: name: too long",
			protocol.ErrorData{Kind: protocol.KindInvalidParams, Field: "name"}},
		{"sentinel", fmt.Errorf("%w: session %q", ErrNotFound, "x"), CodeNotFound, `not found: session "x"`,
			protocol.ErrorData{Kind: protocol.KindNotFound}},
		{"hosted with a kind", fmt.Errorf("trust: %w", errStale), CodeConflict, "trust: stale",
			protocol.ErrorData{Kind: protocol.KindStaleHash}},
		{"hosted without one", errOther, CodeConflict, "other conflict",
			protocol.ErrorData{Kind: protocol.KindConflict}},
		{"anything else", errors.New("boom"), CodeInternal, "internal error: boom",
			protocol.ErrorData{Kind: protocol.KindInternal}},
	} {
		we := WireErrorOf(tc.err, extra)
		require.Equal(t, tc.code, we.Code, tc.name)
		require.Equal(t, tc.msg, we.Message, tc.name)
		require.Equal(t, &tc.data, we.Data, tc.name)
	}
	// An error built as a WireError gets its code's kind when it is sent.
	b := encodeError(nil, &WireError{Code: CodeMethodNotFound, Message: "method not found: x"})
	require.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"method not found: x","data":{"kind":"method_not_found"}}}`, string(b))
}
