package vcs

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRestoreBefore: a turn's snapshot records its turn id (vcs.turns'
// turnId); RestoreBefore brings the workspace back to the state just
// before the turn (a dry run says what and changes nothing); files the
// user changed or created after the last snapshot that the restore would
// overwrite or delete are refused, naming them, until Force; the state it
// replaced is kept (restoring the turn brings it back).
func TestRestoreBefore(t *testing.T) {
	for _, mode := range []Mode{ModeShadow, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			var ws string
			if mode == ModeNative {
				ws = newRepo(t)
			} else {
				ws = realTemp(t)
			}
			s := session(t, ws, mode, "rewind")
			for i, edit := range []func(){
				func() { writeT(t, ws, "a.txt", "a1\n") },
				func() {
					writeT(t, ws, "a.txt", "a2\n")
					writeT(t, ws, "b.txt", "b2\n")
				},
				func() { writeT(t, ws, "c.txt", "c3\n") },
			} {
				require.NoError(t, s.BeginTurn(ctx))
				edit()
				require.NoError(t, s.CommitTurnID(ctx, "completed", []string{"t1", "t2", "t3"}[i]))
			}
			turns, err := s.ListTurns(ctx)
			require.NoError(t, err)
			require.Equal(t, []int{1, 2, 3}, numbers(turns))
			for i, tr := range turns {
				require.Equal(t, []string{"t1", "t2", "t3"}[i], tr.TurnID)
			}

			before := tree(t, ws)
			res, err := s.RestoreBefore(ctx, 2, RewindOptions{DryRun: true})
			require.NoError(t, err)
			require.Equal(t, []string{"a.txt"}, res.Restored)
			require.Equal(t, []string{"a.txt"}, res.Overwritten)
			require.Equal(t, []string{"b.txt", "c.txt"}, res.Deleted)
			require.Empty(t, res.Clobbered)
			require.True(t, res.DryRun)
			require.Equal(t, before, tree(t, ws), "a dry run changes nothing")

			// The user edits c.txt and creates d.txt: the rewind would
			// delete both.
			writeT(t, ws, "c.txt", "the user's\n")
			writeT(t, ws, "d.txt", "the user's own\n")
			before = tree(t, ws)
			res, err = s.RestoreBefore(ctx, 2, RewindOptions{DryRun: true})
			require.NoError(t, err)
			require.Equal(t, []string{"c.txt", "d.txt"}, res.Clobbered, "a dry run names the clobbers")
			_, err = s.RestoreBefore(ctx, 2, RewindOptions{})
			require.True(t, errors.Is(err, ErrClobbered), "%v", err)
			var ce *ClobberError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, []string{"c.txt", "d.txt"}, ce.Files)
			require.Contains(t, err.Error(), "c.txt")
			require.Equal(t, before, tree(t, ws), "a refused rewind changes nothing")

			res, err = s.RestoreBefore(ctx, 2, RewindOptions{Force: true})
			require.NoError(t, err)
			require.Equal(t, []string{"c.txt", "d.txt"}, res.Clobbered)
			require.Equal(t, "a1\n", readT(t, ws, "a.txt"))
			for _, gone := range []string{"b.txt", "c.txt", "d.txt"} {
				require.False(t, existsT(ws, gone), gone)
			}

			// Nothing is lost: the user's files are in the snapshot taken
			// before the restore; restoring turn 3 brings the turns back.
			_, err = s.RestoreTurn(ctx, 3, RestoreOptions{})
			require.NoError(t, err)
			require.Equal(t, "a2\n", readT(t, ws, "a.txt"))
			require.Equal(t, "c3\n", readT(t, ws, "c.txt"))
		})
	}
}

// TestRestoreBeforeUnknownAndRoot: an unknown turn is ErrTurnNotFound; a
// turn with no snapshot before it (CommitTurn without BeginTurn ever) is
// ErrNoPreTurnSnapshot.
func TestRestoreBeforeUnknownAndRoot(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := session(t, ws, ModeShadow, "root")
	writeT(t, ws, "a.txt", "a\n")
	require.NoError(t, s.CommitTurnID(ctx, "completed", "t1"))
	_, err := s.RestoreBefore(ctx, 1, RewindOptions{DryRun: true})
	require.ErrorIs(t, err, ErrNoPreTurnSnapshot)
	_, err = s.RestoreBefore(ctx, 7, RewindOptions{DryRun: true})
	require.ErrorIs(t, err, ErrTurnNotFound)
	require.Equal(t, "a\n", readT(t, ws, "a.txt"))
}
