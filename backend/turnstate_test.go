package backend

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTurnStateTransitions(t *testing.T) {
	legal := [][2]TurnState{
		{StateIdle, StateQueued}, {StateQueued, StateRunning}, {StateRunning, StateAwaiting},
		{StateAwaiting, StateRunning}, {StateRunning, StateIdle}, {StateRunning, StateInterrupted},
		{StateRunning, StateQueued}, {StateAwaiting, StateSuspended}, {StateSuspended, StateQueued},
		{StateSuspended, StateInterrupted}, {StateQueued, StateIdle}, {StateInterrupted, StateQueued},
		{StateAwaiting, StateAwaiting},
	}
	for _, tr := range legal {
		require.NoError(t, tr[0].Next(tr[1]), "%s → %s", tr[0], tr[1])
	}
	illegal := [][2]TurnState{
		{StateIdle, StateRunning}, {StateIdle, StateAwaiting}, {StateIdle, StateSuspended},
		{StateQueued, StateAwaiting}, {StateQueued, StateSuspended}, {StateSuspended, StateRunning},
		{StateSuspended, StateAwaiting}, {StateInterrupted, StateRunning},
	}
	for _, tr := range illegal {
		require.ErrorIs(t, tr[0].Next(tr[1]), ErrIllegalTransition, "%s → %s", tr[0], tr[1])
	}
	for st := range transitions {
		got, err := ParseTurnState(st.String())
		require.NoError(t, err)
		require.Equal(t, st, got)
	}
	_, err := ParseTurnState("finishing")
	require.Error(t, err)
	require.True(t, StateAwaiting.Busy())
	require.False(t, StateSuspended.Busy())
}
