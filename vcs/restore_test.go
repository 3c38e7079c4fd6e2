package vcs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zqagent/sidecar/tools"
)

// threeStates makes turn 1 (a=1, b=1, dir/keep), turn 2 (a=2, b deleted,
// c and dir/new/x created) in a workspace of mode.
func threeStates(t *testing.T, mode Mode) (string, *SessionVCS) {
	t.Helper()
	var ws string
	if mode == ModeNative {
		ws = newRepo(t)
	} else {
		ws = realTemp(t)
	}
	s := session(t, ws, mode, "restore")
	turn(t, s, "completed", func() {
		writeT(t, ws, "a.txt", "a1\n")
		writeT(t, ws, "b.txt", "b1\n")
		writeT(t, ws, "dir/keep.txt", "keep\n")
	})
	turn(t, s, "completed", func() {
		writeT(t, ws, "a.txt", "a2\n")
		removeT(t, ws, "b.txt")
		writeT(t, ws, "c.txt", "c2\n")
		writeT(t, ws, "dir/new/x.txt", "x\n")
	})
	return ws, s
}

func TestRestoreWholeTurn(t *testing.T) {
	for _, mode := range []Mode{ModeShadow, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			ws, s := threeStates(t, mode)
			res, err := s.RestoreTurn(ctx, 1, RestoreOptions{})
			require.NoError(t, err)
			require.Equal(t, RestoreResult{
				Restored:    []string{"a.txt", "b.txt"},
				Overwritten: []string{"a.txt"},
				Deleted:     []string{"c.txt", "dir/new/x.txt"},
				Missing:     []string{},
				Skipped:     []string{},
			}, res)
			require.Equal(t, "a1\n", readT(t, ws, "a.txt"))
			require.Equal(t, "b1\n", readT(t, ws, "b.txt"))
			require.Equal(t, "keep\n", readT(t, ws, "dir/keep.txt"))
			require.False(t, existsT(ws, "c.txt"), "created after turn 1")
			require.False(t, existsT(ws, "dir/new"), "emptied folders go too")

			// Restoring is no turn, and the state it replaced is kept: the
			// restore of turn 2 brings everything back.
			turns, err := s.ListTurns(ctx)
			require.NoError(t, err)
			require.Equal(t, []int{1, 2}, numbers(turns))
			res, err = s.RestoreTurn(ctx, 2, RestoreOptions{})
			require.NoError(t, err)
			require.Equal(t, []string{"a.txt", "c.txt", "dir/new/x.txt"}, res.Restored)
			require.Equal(t, []string{"b.txt"}, res.Deleted)
			require.Equal(t, "a2\n", readT(t, ws, "a.txt"))
			require.Equal(t, "x\n", readT(t, ws, "dir/new/x.txt"))
		})
	}
}

func TestRestoreSomePaths(t *testing.T) {
	ctx := context.Background()
	ws, s := threeStates(t, ModeShadow)
	res, err := s.RestoreTurn(ctx, 1, RestoreOptions{Paths: []string{"a.txt", filepath.Join(ws, "c.txt"), "nope.txt"}})
	require.NoError(t, err)
	require.Equal(t, RestoreResult{
		Restored:    []string{"a.txt"},
		Overwritten: []string{"a.txt"},
		Deleted:     []string{"c.txt"},
		Missing:     []string{"nope.txt"},
		Skipped:     []string{},
	}, res)
	require.Equal(t, "a1\n", readT(t, ws, "a.txt"))
	require.False(t, existsT(ws, "b.txt"), "b.txt was not asked for")
	require.Equal(t, "x\n", readT(t, ws, "dir/new/x.txt"), "dir/ was not asked for")

	// A folder restores everything below it.
	res, err = s.RestoreTurn(ctx, 1, RestoreOptions{Paths: []string{"dir"}})
	require.NoError(t, err)
	require.Equal(t, []string{"dir/new/x.txt"}, res.Deleted)
	require.Empty(t, res.Restored)
	require.False(t, existsT(ws, "dir/new"))
	require.True(t, existsT(ws, "dir/keep.txt"))
}

func TestRestoreDryRunChangesNothing(t *testing.T) {
	ctx := context.Background()
	ws, s := threeStates(t, ModeNative)
	writeT(t, ws, "a.txt", "edited after turn 2\n")
	files := tree(t, ws)
	refs := gitT(t, ws, "for-each-ref", "refs/agent")

	dry, err := s.RestoreTurn(ctx, 1, RestoreOptions{DryRun: true})
	require.NoError(t, err)
	require.True(t, dry.DryRun)
	require.Equal(t, []string{"a.txt", "b.txt"}, dry.Restored)
	require.Equal(t, []string{"a.txt"}, dry.Overwritten)
	require.Equal(t, []string{"c.txt", "dir/new/x.txt"}, dry.Deleted)
	require.Equal(t, files, tree(t, ws), "a dry run writes no file")
	require.Equal(t, refs, gitT(t, ws, "for-each-ref", "refs/agent"), "a dry run moves no ref")

	// The real run does what the dry run said.
	real, err := s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	dry.DryRun = false
	require.Equal(t, dry, real)

	// The edit the restore overwrote is kept in the session's history.
	out := gitT(t, ws, "show", "refs/agent/restore/head:a.txt")
	require.Equal(t, "edited after turn 2\n", out)
}

func TestRestoreRefusesPathsOutsideTheWorkspace(t *testing.T) {
	ctx := context.Background()
	ws, s := threeStates(t, ModeShadow)
	outside := realTemp(t)
	writeT(t, outside, "secret.txt", "secret\n")
	cases := []string{"../escape.txt", "dir/../../escape.txt", filepath.Join(outside, "secret.txt")}
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink(outside, filepath.Join(ws, "link")))
		cases = append(cases, "link/secret.txt")
	}
	files := tree(t, ws)
	for _, p := range cases {
		_, err := s.RestoreTurn(ctx, 1, RestoreOptions{Paths: []string{"a.txt", p}})
		require.ErrorIs(t, err, tools.ErrOutsideWorkspace, p)
		require.Equal(t, files, tree(t, ws), "a refused restore changes nothing (%s)", p)
	}
	require.Equal(t, "secret\n", readT(t, outside, "secret.txt"))
}

func TestRestoreUnknownTurn(t *testing.T) {
	_, s := threeStates(t, ModeShadow)
	_, err := s.RestoreTurn(context.Background(), 7, RestoreOptions{})
	require.ErrorIs(t, err, ErrTurnNotFound)
}

func TestRestoreModesAndLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes and symlinks")
	}
	ctx := context.Background()
	ws := realTemp(t)
	outside := realTemp(t)
	writeT(t, outside, "victim.txt", "must stay\n")
	s := session(t, ws, ModeShadow, "modes")
	turn(t, s, "completed", func() {
		writeT(t, ws, "run.sh", "#!/bin/sh\n")
		require.NoError(t, os.Chmod(filepath.Join(ws, "run.sh"), 0o755))
		writeT(t, ws, "target.txt", "t\n")
		require.NoError(t, os.Symlink("target.txt", filepath.Join(ws, "ln")))
		writeT(t, ws, "plain.txt", "plain v1\n")
	})
	turn(t, s, "completed", func() {
		require.NoError(t, os.Chmod(filepath.Join(ws, "run.sh"), 0o644))
		removeT(t, ws, "ln")
		writeT(t, ws, "ln", "now a file\n")
		// plain.txt becomes a link to a file outside: a restore must
		// replace the link, never write through it.
		removeT(t, ws, "plain.txt")
		require.NoError(t, os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(ws, "plain.txt")))
	})
	res, err := s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"ln", "plain.txt", "run.sh"}, res.Restored)
	fi, err := os.Stat(filepath.Join(ws, "run.sh"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&0o100, "executable bit restored")
	target, err := os.Readlink(filepath.Join(ws, "ln"))
	require.NoError(t, err)
	require.Equal(t, "target.txt", target)
	fi, err = os.Lstat(filepath.Join(ws, "plain.txt"))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular())
	require.Equal(t, "plain v1\n", readT(t, ws, "plain.txt"))
	require.Equal(t, "must stay\n", readT(t, outside, "victim.txt"))
}
