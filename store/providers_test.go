package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProviderProfileRetry: a profile's retry overrides round-trip (absent
// members stay absent, 0 stays 0), are replaced as a whole, and out-of-range
// values are refused naming the member.
func TestProviderProfileRetry(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	zero, three, idle := 0, 3, int64(1500)
	p := ProviderProfile{Name: "flaky", BaseURL: "http://127.0.0.1:1/v1",
		Retry: RetrySettings{MaxRetries: &three, NetworkRetryMax: &zero, StreamIdleMS: &idle}}
	require.NoError(t, s.PutProviderProfile(ctx, p))
	got, err := s.ProviderProfile(ctx, "flaky")
	require.NoError(t, err)
	require.Equal(t, p.Retry, got.Retry)
	require.Nil(t, got.Retry.TimeoutMS)
	require.Nil(t, got.Retry.NetworkRetryBaseMS)

	got.Retry = RetrySettings{}
	require.NoError(t, s.PutProviderProfile(ctx, got))
	got, err = s.ProviderProfile(ctx, "flaky")
	require.NoError(t, err)
	require.Equal(t, RetrySettings{}, got.Retry)

	neg, big, tooLong := -1, MaxRetryCount+1, int64(MaxRetryMillis+1)
	for name, r := range map[string]RetrySettings{
		"retry.maxRetries":      {MaxRetries: &neg},
		"retry.networkRetryMax": {NetworkRetryMax: &big},
		"retry.timeoutMs":       {TimeoutMS: &tooLong},
	} {
		err := s.PutProviderProfile(ctx, ProviderProfile{Name: "bad", Retry: r})
		require.ErrorIs(t, err, ErrInvalid)
		require.Contains(t, err.Error(), name)
	}
}
