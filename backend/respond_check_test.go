package backend

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

func TestValidateResponseShapes(t *testing.T) {
	shell := json.RawMessage(`{"name":"run_shell","command":"touch","alwaysCommand":true}`)
	redirect := json.RawMessage(`{"name":"run_shell","command":"","alwaysCommand":false,"alwaysCommandNote":"not a single simple command"}`)
	legacy := json.RawMessage(`{"name":"run_shell","command":"git"}`) // stored before alwaysCommand existed
	cases := []struct {
		kind string
		data json.RawMessage
		resp string
		bad  string // "" = accepted; else a part of the message
	}{
		{store.KindApproval, shell, `{"outcome":"once"}`, ""},
		{store.KindApproval, shell, `{"outcome":"always_command"}`, ""},
		{store.KindApproval, legacy, `{"outcome":"always_command"}`, ""},
		{store.KindApproval, redirect, `{"outcome":"always_command"}`, "not a single simple command"},
		{store.KindApproval, nil, `{"outcome":"always_command"}`, "not offered"},
		{store.KindApproval, shell, `{"answer":"yes"}`, "response.answer"},
		{store.KindApproval, shell, `{"outcome":"once","Outcome":"deny"}`, "case"},
		{store.KindApproval, shell, `{"outcome":"once","outcome":"deny"}`, "duplicate"},
		{store.KindApproval, shell, `{"outcome":null}`, "response.outcome"},
		{store.KindApproval, shell, `["once"]`, "object"},
		{store.KindApproval, shell, `{"outcome":"deny","note":"use the staging database"}`, ""},
		{store.KindApproval, shell, `{"outcome":"deny","note":""}`, ""},
		{store.KindApproval, shell, `{"outcome":"once","note":"fine"}`, "response.note"},
		{store.KindApproval, shell, `{"outcome":"deny","note":1}`, "note"},
		{store.KindApproval, shell, `{"outcome":"deny","note":"` + strings.Repeat("x", 4097) + `"}`, "at most 4096"},
		{store.KindQuestion, nil, `{"answer":""}`, ""},
		{store.KindQuestion, nil, `{"outcome":"once"}`, "response.outcome"},
		{store.KindQuestion, nil, `{}`, "response.answer"},
		{store.KindQuestion, nil, `{"answer":1}`, "answer"},
		{store.KindPlan, nil, `{"approved":false,"feedback":"shorter"}`, ""},
		{store.KindPlan, nil, `{"feedback":"x"}`, "response.approved"},
		{store.KindPlan, nil, `{"approved":"yes"}`, "approved"},
		{store.KindDirectory, nil, `{"granted":true,"writable":null}`, ""},
		{store.KindDirectory, nil, `{"granted":true,"path":"/tmp","writable":false}`, ""},
		{store.KindDirectory, nil, `{"outcome":"once"}`, "response.outcome"},
	}
	for _, tc := range cases {
		err := validateResponse(store.PendingRequest{Kind: tc.kind, Data: tc.data}, json.RawMessage(tc.resp))
		if tc.bad == "" {
			require.NoError(t, err, "%s %s", tc.kind, tc.resp)
			continue
		}
		require.Error(t, err, "%s %s", tc.kind, tc.resp)
		require.ErrorIs(t, err, protocol.ErrInvalidParams, "%s %s", tc.kind, tc.resp)
		require.Contains(t, err.Error(), tc.bad, "%s %s", tc.kind, tc.resp)
	}
}

// FuzzValidateResponse: any answer is accepted or refused with -32602, never
// a panic or another code.
func FuzzValidateResponse(f *testing.F) {
	for _, s := range []string{`{"outcome":"once"}`, `{"answer":"x"}`, `{"approved":true}`, `{"granted":false,"path":""}`, `{"a":1,"A":2}`, `{`, `[]`, `null`, `{"outcome":"once"} x`} {
		f.Add(s, 0)
	}
	kinds := []string{store.KindApproval, store.KindQuestion, store.KindPlan, store.KindDirectory}
	f.Fuzz(func(t *testing.T, resp string, kind int) {
		k := kinds[uint(kind)%uint(len(kinds))]
		err := validateResponse(store.PendingRequest{Kind: k, Data: json.RawMessage(`{"command":"ls"}`)}, json.RawMessage(resp))
		if err != nil && !errors.Is(err, protocol.ErrInvalidParams) {
			t.Fatalf("not invalid params: %v", err)
		}
	})
}

func FuzzDecodeParams(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s","response":{"outcome":"once"},"requestId":"r"}`))
	f.Add([]byte(`{"sessionId":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p protocol.RequestRespondParams
		err := protocol.DecodeParams(data, &p)
		if err == nil && (p.SessionID == "" || p.RequestID == "" || len(p.Response) == 0) {
			t.Fatal("required field accepted empty")
		}
		if err != nil && !errors.Is(err, protocol.ErrInvalidParams) {
			t.Fatalf("not invalid params: %v", err)
		}
		if err == nil {
			_ = validateResponse(store.PendingRequest{Kind: store.KindApproval}, p.Response)
		}
	})
}
