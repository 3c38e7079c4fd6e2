package backend

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

// TestLiveTurns: the session's turns are its turn_starts in order (a retry
// or resume of a turn counts once), less those a session_rewound dropped.
func TestLiveTurns(t *testing.T) {
	start := func(id, input string, resumed bool) store.Event {
		b, _ := json.Marshal(protocol.TurnStartData{TaskID: id, Input: input, Resumed: resumed})
		return store.Event{Type: string(protocol.EventTurnStart), TurnID: id, Data: b}
	}
	rewound := func(to string) store.Event {
		b, _ := json.Marshal(protocol.SessionRewoundData{ToTurnID: to})
		return store.Event{Type: string(protocol.EventSessionRewound), Data: b}
	}
	ids := func(ts []protocol.RewoundTurn) []string {
		out := []string{}
		for _, t := range ts {
			out = append(out, t.TurnID+":"+t.Input)
		}
		return out
	}
	evs := []store.Event{start("a", "one", false), start("b", "two", false), start("b", "", false), start("c", "three", false), start("c", "", true)}
	require.Equal(t, []string{"a:one", "b:two", "c:three"}, ids(liveTurns(evs)))
	evs = append(evs, rewound("b"), start("d", "four", false))
	require.Equal(t, []string{"a:one", "d:four"}, ids(liveTurns(evs)))
	evs = append(evs, rewound("nope"))
	require.Equal(t, []string{"a:one", "d:four"}, ids(liveTurns(evs)), "a rewind to an unknown turn drops nothing")
	evs = append(evs, rewound("a"))
	require.Empty(t, liveTurns(evs))
}

// TestPickSnapshotTurn: the snapshot whose pre-turn state a rewind brings
// back is the lowest of the dropped turns'; snapshots of turns dropped by
// an earlier history-only rewind stay out of it; one that may hold a
// dropped turn's changes but is expired or has no turn id refuses.
func TestPickSnapshotTurn(t *testing.T) {
	tr := func(n int, id string, expired bool) vcs.Turn {
		return vcs.Turn{Number: n, TurnID: id, Expired: expired}
	}
	for _, c := range []struct {
		name    string
		list    []vcs.Turn
		dropped []string
		want    int
		err     error
	}{
		{"the first dropped snapshot", []vcs.Turn{tr(1, "a", false), tr(2, "b", false), tr(3, "c", false)}, []string{"b", "c"}, 2, nil},
		{"a retry's second snapshot", []vcs.Turn{tr(1, "a", false), tr(2, "b", false), tr(3, "b", false)}, []string{"b"}, 2, nil},
		{"no dropped turn changed files", []vcs.Turn{tr(1, "a", false)}, []string{"b"}, 0, nil},
		{"no snapshots", nil, []string{"a"}, 0, nil},
		{"a turn an earlier rewind dropped", []vcs.Turn{tr(1, "a", false), tr(2, "x", false), tr(3, "c", false)}, []string{"c"}, 3, nil},
		{"rewinding before it too", []vcs.Turn{tr(1, "a", false), tr(2, "x", false), tr(3, "c", false)}, []string{"a", "c"}, 1, nil},
		{"the turn's snapshot expired", []vcs.Turn{tr(1, "a", true), tr(2, "b", false)}, []string{"a", "b"}, 0, vcs.ErrTurnExpired},
		{"an expired snapshot not listed", []vcs.Turn{tr(3, "c", false)}, []string{"b", "c"}, 0, vcs.ErrTurnExpired},
		{"an expired snapshot of a kept turn", []vcs.Turn{tr(1, "a", true), tr(2, "b", false)}, []string{"b"}, 2, nil},
		{"a snapshot without a turn id", []vcs.Turn{tr(1, "a", false), tr(2, "", false), tr(3, "c", false)}, []string{"c"}, 0, ErrConflict},
		{"one without a turn id before the kept ones", []vcs.Turn{tr(1, "", false), tr(2, "a", false), tr(3, "c", false)}, []string{"c"}, 3, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := pickSnapshotTurn(c.list, "s", "turn", c.dropped)
			if c.err != nil {
				require.True(t, errors.Is(err, c.err), "%v", err)
				require.Contains(t, err.Error(), "turn")
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

// TestEnqueueWaitsForNoRewind: while a rewind runs, Enqueue's check
// refuses (-32003 busy); an Enqueue past its check makes a rewind refuse.
func TestEnqueueWaitsForNoRewind(t *testing.T) {
	h := &Session{id: "s"}
	h.rewinding = true
	err := h.enterEnqueue()
	require.ErrorIs(t, err, ErrRewindBusy)
	require.ErrorIs(t, err, ErrConflict)
	h.rewinding = false
	require.NoError(t, h.enterEnqueue())
	require.Equal(t, 1, h.enqueuing)
	h.leaveEnqueue()
	require.Zero(t, h.enqueuing)
}
