package backend

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// formCard is an elicitation_requested card of form mode.
var formCard = json.RawMessage(`{"taskId":"t1","reqId":"c1","requestId":"elicit_1","server":"s","message":"Who are you?","mode":"form",
	"requestedSchema":{"type":"object","properties":{"name":{"type":"string","minLength":1},"age":{"type":"integer","minimum":0,"maximum":150},
	"email":{"type":"string","format":"email"}},"required":["name"]}}`)

var urlCard = json.RawMessage(`{"taskId":"t1","reqId":"c1","requestId":"elicit_2","server":"s","message":"Sign in","mode":"url",
	"url":"https://login.example.com/x","host":"login.example.com","elicitationId":"e1"}`)

// TestValidateElicitationResponse: an answer is MCP's {action, content?};
// content goes with accept in form mode only and must satisfy the form's
// schema; a refusal is -32602 naming the field.
func TestValidateElicitationResponse(t *testing.T) {
	for _, tc := range []struct {
		data       json.RawMessage
		resp, want string // want: "" accepted, else the field the error names
	}{
		{formCard, `{"action":"accept","content":{"name":"Ada","age":36,"email":"ada@example.com"}}`, ""},
		{formCard, `{"action":"decline"}`, ""},
		{formCard, `{"action":"cancel","content":null}`, ""},
		{formCard, `{"action":"accept","content":{"name":"Ada","age":200}}`, "response.content.age"},
		{formCard, `{"action":"accept","content":{"name":"Ada","email":"nope"}}`, "response.content.email"},
		{formCard, `{"action":"accept","content":{"age":3}}`, "response.content.name"},
		{formCard, `{"action":"accept"}`, "response.content.name"},
		{formCard, `{"action":"accept","content":{"name":"Ada","name":"Bob"}}`, "response.content"},
		{formCard, `{"action":"accept","content":[1]}`, "response.content"},
		{formCard, `{"action":"decline","content":{"name":"Ada"}}`, "response.content"},
		{formCard, `{"action":"ok"}`, "response.action"},
		{formCard, `{"content":{"name":"Ada"}}`, "response.action"},
		{formCard, `{"action":"accept","Action":"decline"}`, "response"},
		{formCard, `{"outcome":"once"}`, "response.outcome"},
		{urlCard, `{"action":"accept"}`, ""},
		{urlCard, `{"action":"accept","content":{"x":1}}`, "response.content"},
	} {
		err := validateResponse(store.PendingRequest{Kind: store.KindElicitation, Data: tc.data}, json.RawMessage(tc.resp))
		if tc.want == "" {
			require.NoError(t, err, tc.resp)
			continue
		}
		require.ErrorIs(t, err, protocol.ErrInvalidParams, tc.resp)
		var pe *protocol.ParamError
		if errors.As(err, &pe) {
			require.Equal(t, tc.want, pe.Field, "%s: %v", tc.resp, err)
		} else {
			require.Contains(t, err.Error(), tc.want, tc.resp)
		}
	}
}

// TestElicitationOutcomes: request_resolved says what the user did.
func TestElicitationOutcomes(t *testing.T) {
	for resp, want := range map[string]string{
		`{"action":"accept","content":{"name":"Ada"}}`: protocol.OutcomeAccepted,
		`{"action":"decline"}`:                         protocol.OutcomeDeclined,
		`{"action":"cancel"}`:                          protocol.OutcomeCancelled,
	} {
		require.Equal(t, want, resolvedOutcome(store.KindElicitation, json.RawMessage(resp)), resp)
	}
}

// TestRecoverClosesElicitations: at start, an elicitation a dead process
// left open is closed (cancel, request_resolved turn_ended) since its MCP
// call died with that process; its turn, with nothing else pending, ends
// instead of being suspended on a request nobody can answer any more.
func TestRecoverClosesElicitations(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "data"), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	ss, err := st.CreateSession(ctx, store.Session{})
	require.NoError(t, err)
	var d protocol.ElicitationRequestedData
	require.NoError(t, json.Unmarshal(formCard, &d))
	open, err := durableInput(engine.Event{Type: protocol.EventElicitationRequested, Data: d}, nil, StateAwaiting)
	require.NoError(t, err)
	require.NotNil(t, open.Pending, "an elicitation opens a pending request")
	require.Equal(t, store.KindElicitation, open.Pending.Kind)
	_, err = st.Append(ctx, ss.ID, store.EventInput{TurnID: "t1", Type: "turn_start", Status: "running"}, open)
	require.NoError(t, err)
	pend, err := st.PendingRequests(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, pend, 1, "stored as a pending request")

	ids, err := RecoverInterrupted(ctx, st, nil)
	require.NoError(t, err)
	require.Equal(t, []string{ss.ID}, ids)
	pend, err = st.PendingRequests(ctx, ss.ID)
	require.NoError(t, err)
	require.Empty(t, pend)
	req, err := st.Request(ctx, "elicit_1")
	require.NoError(t, err)
	require.JSONEq(t, `{"action":"cancel"}`, string(req.Response))
	evs, err := st.EventsAfter(ctx, ss.ID, 2, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, "request_resolved", evs[0].Type)
	require.JSONEq(t, `{"taskId":"t1","requestId":"elicit_1","kind":"elicitation","outcome":"turn_ended"}`, string(evs[0].Data))
	require.Equal(t, "turn_end", evs[1].Type)
	require.Contains(t, string(evs[1].Data), `"status":"interrupted"`)
}

// FuzzValidateElicitation: any answer to a form is accepted or refused with
// -32602, never a panic or another code.
func FuzzValidateElicitation(f *testing.F) {
	for _, s := range []string{`{"action":"accept","content":{"name":"x"}}`, `{"action":"accept","content":{"age":1e400}}`, `{"action":"decline"}`, `{"content":[]}`, `{`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, resp string) {
		err := validateResponse(store.PendingRequest{Kind: store.KindElicitation, Data: formCard}, json.RawMessage(resp))
		if err != nil && !errors.Is(err, protocol.ErrInvalidParams) {
			t.Fatalf("not invalid params: %v", err)
		}
	})
}
