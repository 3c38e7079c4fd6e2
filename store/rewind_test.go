package store

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// TestRewindIntentEndsWithItsEvent: a rewind intent stays (across a
// reopen) until the event that ends it, whose transaction also writes the
// rewound history; when that transaction fails, neither the history, nor
// the event, nor the intent's end is stored. A deleted session takes its
// intent with it.
func TestRewindIntentEndsWithItsEvent(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	ss, other := newSession(t, s), newSession(t, s)
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "one", TurnID: "t1"}, {Role: llm.RoleAssistant, Content: "did one"},
		{Role: llm.RoleUser, Content: "two", TurnID: "t2"}, {Role: llm.RoleAssistant, Content: "did two"},
	}
	_, err = s.Append(ctx, ss.ID, EventInput{TurnID: "t2", Type: "turn_end", History: history})
	require.NoError(t, err)
	require.NoError(t, s.BeginRewind(ctx, RewindIntent{SessionID: ss.ID, ToTurnID: "t2", Data: json.RawMessage(`{"snapshotTurn":2}`)}))
	require.NoError(t, s.BeginRewind(ctx, RewindIntent{SessionID: other.ID, ToTurnID: "x1"}))
	require.ErrorIs(t, s.BeginRewind(ctx, RewindIntent{SessionID: ss.ID}), ErrInvalid)
	require.ErrorIs(t, s.BeginRewind(ctx, RewindIntent{SessionID: "nope", ToTurnID: "t"}), ErrNotFound)
	require.NoError(t, s.Close())

	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	intents, err := s.RewindIntents(ctx)
	require.NoError(t, err)
	require.Len(t, intents, 2)
	require.Equal(t, ss.ID, intents[0].SessionID)
	require.Equal(t, "t2", intents[0].ToTurnID)
	require.JSONEq(t, `{"snapshotTurn":2}`, string(intents[0].Data))
	require.False(t, intents[0].CreatedAt.IsZero())

	// A transaction that fails (a pending request whose id exists already)
	// stores none of it.
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "permission_required", Pending: &PendingInput{RequestID: "r1", Kind: KindApproval}})
	require.NoError(t, err)
	last, err := s.LastSeq(ctx, ss.ID)
	require.NoError(t, err)
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "session_rewound", History: history[:2], EndRewind: true,
		Pending: &PendingInput{RequestID: "r1", Kind: KindApproval}})
	require.Error(t, err)
	_, ok, err := s.RewindIntentOf(ctx, ss.ID)
	require.NoError(t, err)
	require.True(t, ok, "the intent stays when its event fails")
	msgs, err := s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Len(t, msgs, 4)
	seq, err := s.LastSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, last, seq)

	evs, err := s.Append(ctx, ss.ID, EventInput{Type: "session_rewound", Data: json.RawMessage(`{"toTurnId":"t2"}`), History: history[:2], EndRewind: true})
	require.NoError(t, err)
	_, ok, err = s.RewindIntentOf(ctx, ss.ID)
	require.NoError(t, err)
	require.False(t, ok, "ended with its event")
	msgs, err = s.Messages(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, history[:2], msgs, "the rewound history, in the event's transaction")
	cp, err := s.CheckpointSeq(ctx, ss.ID)
	require.NoError(t, err)
	require.Equal(t, evs[0].Seq, cp)

	require.NoError(t, s.DeleteSession(ctx, other.ID))
	intents, err = s.RewindIntents(ctx)
	require.NoError(t, err)
	require.Empty(t, intents)

	require.NoError(t, s.BeginRewind(ctx, RewindIntent{SessionID: ss.ID, ToTurnID: "t1"}))
	require.NoError(t, s.EndRewind(ctx, ss.ID))
	_, ok, err = s.RewindIntentOf(ctx, ss.ID)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestEventsOfTypes: only the given types, in seq order.
func TestEventsOfTypes(t *testing.T) {
	ctx := ctxT(t)
	s := openTest(t)
	ss := newSession(t, s)
	for _, in := range []EventInput{
		{TurnID: "t1", Type: "turn_start"}, {TurnID: "t1", Type: "assistant_delta"}, {TurnID: "t1", Type: "turn_end"},
		{TurnID: "t2", Type: "turn_start"}, {Type: "session_rewound", Data: json.RawMessage(`{"toTurnId":"t2"}`)},
	} {
		_, err := s.Append(ctx, ss.ID, in)
		require.NoError(t, err)
	}
	evs, err := s.EventsOfTypes(ctx, ss.ID, "session_rewound", "turn_start")
	require.NoError(t, err)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+":"+e.TurnID)
	}
	require.Equal(t, []string{"turn_start:t1", "turn_start:t2", "session_rewound:"}, got)
	require.JSONEq(t, `{"toTurnId":"t2"}`, string(evs[2].Data))
	evs, err = s.EventsOfTypes(ctx, ss.ID)
	require.NoError(t, err)
	require.Empty(t, evs)
	_, err = s.EventsOfTypes(ctx, "nope", "turn_start")
	require.ErrorIs(t, err, ErrNotFound)
}
