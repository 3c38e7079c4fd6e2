package backend

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIllegalTransitionLogged: a move the machine does not have is logged
// and refused; the state is unchanged.
func TestIllegalTransitionLogged(t *testing.T) {
	var buf bytes.Buffer
	h := &Session{id: "s1", s: &Sessions{log: slog.New(slog.NewTextHandler(&buf, nil))}, state: StateIdle}
	h.mu.Lock()
	err := h.transitionLocked(StateAwaiting)
	st := h.state
	require.NoError(t, h.transitionLocked(StateQueued))
	h.mu.Unlock()
	require.ErrorIs(t, err, ErrIllegalTransition)
	require.Equal(t, StateIdle, st)
	require.Contains(t, buf.String(), "illegal turn state transition: idle → awaiting")
	require.Equal(t, StateQueued, h.turnState())
}
