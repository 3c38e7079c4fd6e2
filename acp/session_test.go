package acp

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
)

// TestReplayAndDedup: during session/load the stored events are history up
// to the subscribe's lastSeq, later ones are live, and a seq seen before (a
// renewed subscription) is dropped.
func TestReplayAndDedup(t *testing.T) {
	s := newSession("s1", "/p")
	s.startLoad()
	type step struct {
		seq          int64
		history, dup bool
	}
	for _, st := range []step{{1, true, false}, {2, true, false}} {
		h, d := s.handled(st.seq)
		require.Equal(t, st.history, h, "seq %d", st.seq)
		require.Equal(t, st.dup, d, "seq %d", st.seq)
	}
	done := s.replayUntil(3) // the subscribe answered: 3 events stored
	select {
	case <-done:
		t.Fatal("replay done before seq 3")
	default:
	}
	for _, st := range []step{{3, true, false}, {2, false, true}, {4, false, false}, {4, false, true}, {5, false, false}} {
		h, d := s.handled(st.seq)
		require.Equal(t, st.history, h, "seq %d", st.seq)
		require.Equal(t, st.dup, d, "seq %d", st.seq)
	}
	<-done
}

// TestTurnEndBeforeWait: a turn that ends before its prompt waits for it
// is handed over when it does; only the last maxEnded are kept.
func TestTurnEndBeforeWait(t *testing.T) {
	s := newSession("s1", "/p")
	s.noteError("t1", "boom")
	s.endTurn("t1", protocol.TurnEndData{Status: protocol.TurnError})
	e := <-s.wait("t1")
	require.Equal(t, "boom", e.lastErr)

	ch := s.wait("t2")
	s.endTurn("t2", protocol.TurnEndData{Status: protocol.TurnCompleted})
	require.Equal(t, protocol.TurnCompleted, (<-ch).end.Status)

	for i := range maxEnded + 5 {
		s.endTurn(fmt.Sprintf("old%d", i), protocol.TurnEndData{})
	}
	require.Len(t, s.ended, maxEnded)
}
