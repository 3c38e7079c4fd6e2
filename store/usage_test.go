package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm/prices"
)

// TestSessionUsageSurvivesReopen: an event's Usage replaces the session's
// usage totals in its transaction unless older totals (a lower UsageSeq)
// arrive late, and a reopened store (a restarted sidecar) reads them back;
// an event without Usage leaves them.
func TestSessionUsageSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	ss := newSession(t, s)
	require.Nil(t, ss.Usage, "a new session has no usage")
	first := `{"tokens":{"input":10,"cachedInput":0,"output":2,"reasoning":0},"cost":0.5}`
	second := `{"tokens":{"input":30,"cachedInput":5,"output":4,"reasoning":1},"cost":null}`
	_, err = s.Append(ctx, ss.ID,
		EventInput{TurnID: "t1", Type: "usage", Data: rawJSON(map[string]any{"n": 1}), Usage: []byte(first), UsageSeq: 1},
		EventInput{TurnID: "t1", Type: "usage", Data: rawJSON(map[string]any{"n": 3}), Usage: []byte(second), UsageSeq: 3},
		EventInput{Type: "usage", Data: rawJSON(map[string]any{"n": 2}), Usage: []byte(first), UsageSeq: 2},
		EventInput{TurnID: "t1", Type: "iteration_end"})
	require.NoError(t, err)
	_, err = s.Append(ctx, ss.ID, EventInput{Type: "usage", Usage: []byte("{not json")})
	require.ErrorIs(t, err, ErrInvalid)
	require.NoError(t, s.Close())

	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Session(ctx, ss.ID)
	require.NoError(t, err)
	require.JSONEq(t, second, string(got.Usage))
	list, err := s.Sessions(ctx, ss.ProjectID)
	require.NoError(t, err)
	require.JSONEq(t, second, string(list[0].Usage))
}

// TestProviderProfilePrices: a profile's prices round-trip; bad ones are
// refused naming the model.
func TestProviderProfilePrices(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	half := 0.5
	p := ProviderProfile{Name: "local", BaseURL: "http://127.0.0.1:1/v1",
		Prices: map[string]prices.Price{"qwen3-coder": {Input: 1, CachedInput: &half, Output: 4}, "free": {}}}
	require.NoError(t, s.PutProviderProfile(ctx, p))
	got, err := s.ProviderProfile(ctx, "local")
	require.NoError(t, err)
	require.Equal(t, p.Prices, got.Prices)

	got.Prices = nil
	require.NoError(t, s.PutProviderProfile(ctx, got))
	got, err = s.ProviderProfile(ctx, "local")
	require.NoError(t, err)
	require.Nil(t, got.Prices)

	for name, bad := range map[string]map[string]prices.Price{
		"prices.m":  {"m": {Input: -1}},
		"model id":  {"": {Input: 1}},
		"prices.m2": {"m2": {Output: 1e9}},
	} {
		err := s.PutProviderProfile(ctx, ProviderProfile{Name: "bad", BaseURL: "http://x/v1", Prices: bad})
		require.ErrorIs(t, err, ErrInvalid, name)
		require.Contains(t, err.Error(), name)
	}
}
