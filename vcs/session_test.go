package vcs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/stretchr/testify/require"
)

func TestShadowModeOnAPlainFolder(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	writeT(t, ws, "main.go", "package main\n")

	p := ResolvePlan(ctx, ws, Config{ShadowRoot: testShadowRoot, Mode: ModeAuto})
	require.Equal(t, ModeShadow, p.Mode, p.Status)
	require.Equal(t, ShadowGitDir(testShadowRoot, ws), p.GitDir)
	require.Contains(t, p.Status, "shadow")

	s := NewSession(p, "s1")
	turn(t, s, "completed", func() {
		writeT(t, ws, "main.go", "package main\n\nfunc main() {}\n")
		writeT(t, ws, "lib/util.go", "package lib\n")
	})
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Equal(t, 1, turns[0].Number)
	require.Equal(t, "completed", turns[0].Status)
	require.False(t, turns[0].Time.IsZero())
	require.Equal(t, []string{"A lib/util.go", "M main.go"}, paths(turns[0].Files))

	require.NoDirExists(t, filepath.Join(ws, ".git"), "shadow mode must not make the workspace a repository")
	require.FileExists(t, filepath.Join(p.GitDir, "HEAD"))
	require.NoDirExists(t, filepath.Join(ws, ".agent"), "the shadow repository lives in the data dir")
	// The shadow repository's own files are never snapshotted.
	for _, f := range turns[0].Files {
		require.False(t, strings.HasPrefix(f.Path, ".agent"), f.Path)
	}
}

func TestOnlyChangingTurnsGetNumbers(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	writeT(t, ws, "a.txt", "a0\n")
	s := session(t, ws, ModeShadow, "s1")

	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a1\n") })
	turn(t, s, "completed", func() {}) // reads only
	turn(t, s, "interrupted", func() { writeT(t, ws, "b.txt", "b\n") })

	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, numbers(turns))
	require.Equal(t, []string{"M a.txt"}, paths(turns[0].Files))
	require.Equal(t, []string{"A b.txt"}, paths(turns[1].Files))
	require.Equal(t, "interrupted", turns[1].Status)

	b, err := json.Marshal(turns[0])
	require.NoError(t, err)
	require.Contains(t, string(b), `"number":1`)
	require.Contains(t, string(b), `"files":[{"path":"a.txt","status":"M"}]`)
}

func TestChangesOutsideTheAgentAreNotTheTurns(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	writeT(t, ws, "a.txt", "a0\n")
	s := session(t, ws, ModeShadow, "s1")
	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a1\n") })
	writeT(t, ws, "user.txt", "the user typed this between turns\n")
	turn(t, s, "completed", func() { writeT(t, ws, "agent.txt", "x\n") })

	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, numbers(turns))
	require.Equal(t, []string{"A agent.txt"}, paths(turns[1].Files))
}

func TestDiffTurnShowsExactlyItsChanges(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	writeT(t, ws, "a.txt", "one\ntwo\n")
	writeT(t, ws, "c.txt", "c0\n")
	s := session(t, ws, ModeShadow, "s1")
	turn(t, s, "completed", func() {
		writeT(t, ws, "a.txt", "one\nTWO\n")
		writeT(t, ws, "b.txt", "new\n")
	})
	turn(t, s, "completed", func() { writeT(t, ws, "c.txt", "c1\n") })

	patch, err := s.DiffTurn(ctx, 1)
	require.NoError(t, err)
	files, _, err := gitdiff.Parse(strings.NewReader(patch))
	require.NoError(t, err, patch)
	got := map[string]*gitdiff.File{}
	for _, f := range files {
		got[f.NewName] = f
	}
	require.Len(t, got, 2, patch)
	require.True(t, got["b.txt"].IsNew)
	a := got["a.txt"]
	require.NotNil(t, a)
	require.Len(t, a.TextFragments, 1)
	require.Equal(t, int64(1), a.TextFragments[0].LinesAdded)
	require.Equal(t, int64(1), a.TextFragments[0].LinesDeleted)
	require.Contains(t, patch, "-two\n+TWO\n")
	require.NotContains(t, patch, "c.txt")

	patch, err = s.DiffTurn(ctx, 2)
	require.NoError(t, err)
	require.Contains(t, patch, "-c0\n+c1\n")
	require.NotContains(t, patch, "a.txt")

	_, err = s.DiffTurn(ctx, 3)
	require.ErrorIs(t, err, ErrTurnNotFound)
	_, err = s.DiffTurn(ctx, 0)
	require.ErrorIs(t, err, ErrTurnNotFound)
}

func TestExcludedAndIgnoredFilesAreNotSnapshotted(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	writeT(t, ws, ".gitignore", "*.log\n")
	s := session(t, ws, ModeShadow, "s1")
	turn(t, s, "completed", func() {
		writeT(t, ws, "src/app.js", "x\n")
		writeT(t, ws, ".agent/state.json", "{}\n")
		writeT(t, ws, "node_modules/pkg/index.js", "module.exports = 1\n")
		writeT(t, ws, "web/node_modules/dep/index.js", "1\n")
		writeT(t, ws, "debug.log", "noise\n")
	})
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Equal(t, []string{"A src/app.js"}, paths(turns[0].Files))

	// Changing only excluded files is no turn at all.
	turn(t, s, "completed", func() {
		writeT(t, ws, "node_modules/pkg/index.js", "module.exports = 2\n")
		writeT(t, ws, ".agent/state.json", "{\"x\":1}\n")
	})
	turns, err = s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1}, numbers(turns))

	// A restore neither deletes nor rewrites them.
	turn(t, s, "completed", func() { writeT(t, ws, "src/app.js", "y\n") })
	_, err = s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, "x\n", readT(t, ws, "src/app.js"))
	require.Equal(t, "module.exports = 2\n", readT(t, ws, "node_modules/pkg/index.js"))
	require.Equal(t, "{\"x\":1}\n", readT(t, ws, ".agent/state.json"))
	require.Equal(t, "noise\n", readT(t, ws, "debug.log"))
}

func TestForgetRemovesTheRefsOnly(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	s := session(t, ws, ModeNative, "gone")
	other := session(t, ws, ModeNative, "kept")
	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a\n") })
	turn(t, s, "completed", func() { writeT(t, ws, "b.txt", "b\n") })
	turn(t, other, "completed", func() { writeT(t, ws, "c.txt", "c\n") })
	require.NotEmpty(t, gitT(t, ws, "for-each-ref", "refs/agent/gone"))
	before := tree(t, ws)

	require.NoError(t, s.Forget(ctx))
	require.Empty(t, gitT(t, ws, "for-each-ref", "refs/agent/gone"))
	require.NotEmpty(t, gitT(t, ws, "for-each-ref", "refs/agent/kept"), "another session's refs stay")
	require.NoFileExists(t, s.Plan().IndexPath("gone"))
	require.Equal(t, before, tree(t, ws), "forget touches no file")
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Empty(t, turns)

	// The session starts over from 1.
	turn(t, s, "completed", func() { writeT(t, ws, "d.txt", "d\n") })
	turns, err = s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1}, numbers(turns))
	require.Equal(t, []string{"A d.txt"}, paths(turns[0].Files))
}

func TestNumberingSurvivesANewSessionObject(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := session(t, ws, ModeShadow, "resume")
	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a\n") })
	turn(t, s, "completed", func() { writeT(t, ws, "b.txt", "b\n") })

	again := session(t, ws, ModeShadow, "resume")
	turn(t, again, "completed", func() { writeT(t, ws, "c.txt", "c\n") })
	turns, err := again.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, numbers(turns))
	require.Equal(t, []string{"A c.txt"}, paths(turns[2].Files))
}

func TestSessionsOnOneWorkspaceAreSeparate(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	a := session(t, ws, ModeShadow, "a")
	b := session(t, ws, ModeShadow, "b/with spaces")
	turn(t, a, "completed", func() { writeT(t, ws, "a.txt", "a\n") })
	turn(t, b, "completed", func() { writeT(t, ws, "b.txt", "b\n") })
	turn(t, a, "completed", func() { writeT(t, ws, "a2.txt", "a\n") })

	ta, err := a.ListTurns(ctx)
	require.NoError(t, err)
	tb, err := b.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, numbers(ta))
	require.Equal(t, []int{1}, numbers(tb))
	require.Equal(t, []string{"A b.txt"}, paths(tb[0].Files))
	require.Equal(t, []string{"A a2.txt"}, paths(ta[1].Files), "a's second turn excludes b's change")
	require.NotEqual(t, a.Plan().IndexPath("a"), b.Plan().IndexPath("b/with spaces"))
}

func TestConcurrentUseOfOneSession(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := session(t, ws, ModeShadow, "c")
	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a\n") })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			_, err := s.ListTurns(ctx)
			errs <- err
		})
		wg.Go(func() { errs <- s.CommitTurn(ctx, "completed") })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1}, numbers(turns), "nothing changed after turn 1")
}

func TestNoGitBinaryFallsBackToOff(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	for _, mode := range []Mode{ModeAuto, ModeNative, ModeShadow} {
		p := ResolvePlan(ctx, ws, Config{ShadowRoot: testShadowRoot, Mode: mode, Git: filepath.Join(t.TempDir(), "no-such-git")})
		require.Equal(t, ModeOff, p.Mode)
		require.Equal(t, mode, p.Requested)
		require.Contains(t, p.Status, "no git binary")
		require.False(t, p.Enabled())
	}

	t.Setenv("PATH", "")
	p := ResolvePlan(ctx, ws, Config{ShadowRoot: testShadowRoot, Mode: ModeAuto})
	require.Equal(t, ModeOff, p.Mode)
	require.Contains(t, p.Status, "no git binary")

	s := NewSession(p, "s")
	require.NoError(t, s.BeginTurn(ctx))
	writeT(t, ws, "x.txt", "x\n")
	require.NoError(t, s.CommitTurn(ctx, "completed"))
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Empty(t, turns)
	_, err = s.DiffTurn(ctx, 1)
	require.ErrorIs(t, err, ErrDisabled)
	_, err = s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.ErrorIs(t, err, ErrDisabled)
	require.NoError(t, s.Forget(ctx))
	require.NoDirExists(t, filepath.Join(ws, ".agent"))
}

func TestResolvePlan(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	plain := realTemp(t)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "sub"), 0o755))
	for _, tc := range []struct {
		name string
		ws   string
		mode Mode
		want Mode
	}{
		{"default is off", repo, "", ModeOff},
		{"off", repo, ModeOff, ModeOff},
		{"auto in a repo", repo, ModeAuto, ModeNative},
		{"auto in a repo's subfolder", filepath.Join(repo, "sub"), ModeAuto, ModeShadow},
		{"native in a repo's subfolder", filepath.Join(repo, "sub"), ModeNative, ModeOff},
		{"auto elsewhere", plain, ModeAuto, ModeShadow},
		{"native elsewhere", plain, ModeNative, ModeOff},
		{"shadow in a repo", repo, ModeShadow, ModeShadow},
		{"invalid", repo, "sometimes", ModeOff},
		{"missing workspace", filepath.Join(plain, "nope"), ModeAuto, ModeOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ResolvePlan(ctx, tc.ws, Config{ShadowRoot: testShadowRoot, Mode: tc.mode})
			require.Equal(t, tc.want, p.Mode, p.Status)
			require.NotEmpty(t, p.Status)
			if tc.want == ModeNative {
				require.Equal(t, filepath.Join(repo, ".git"), p.GitDir)
			}
		})
	}
	_, err := ParseMode("sometimes")
	require.ErrorIs(t, err, ErrInvalidMode)
	m, err := ParseMode(" Native ")
	require.NoError(t, err)
	require.Equal(t, ModeNative, m)
}

func TestShadowRepositoryStaysOutOfTheUsersStatus(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	before := gitT(t, repo, "status", "--porcelain", "--untracked-files=all")
	s := session(t, repo, ModeShadow, "shadowed")
	require.Equal(t, ModeShadow, s.Plan().Mode)
	turn(t, s, "completed", func() { writeT(t, repo, "tracked.txt", "changed\n") })
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"M tracked.txt"}, paths(turns[0].Files))
	after := gitT(t, repo, "status", "--porcelain", "--untracked-files=all")
	require.NotContains(t, after, ".agent")
	require.Equal(t, before+" M tracked.txt\n", after)
	require.Empty(t, gitT(t, repo, "for-each-ref", "refs/agent"), "shadow mode writes no ref into the user's repository")
}

func TestUnreadableFilesAreSkippedNotFatal(t *testing.T) {
	if os.Geteuid() == 0 || runtime.GOOS == "windows" {
		t.Skip("needs file permissions that bind")
	}
	ctx := context.Background()
	ws := realTemp(t)
	s := session(t, ws, ModeShadow, "perm")
	turn(t, s, "completed", func() {
		writeT(t, ws, "secret.bin", "locked\n")
		require.NoError(t, os.Chmod(filepath.Join(ws, "secret.bin"), 0))
		writeT(t, ws, "ok.txt", "ok\n")
	})
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(ws, "secret.bin"), 0o644) })
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Contains(t, paths(turns[0].Files), "A ok.txt")
}

func TestDiffTurnIsBounded(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := session(t, ws, ModeShadow, "big")
	line := strings.Repeat("x", 99) + "\n"
	turn(t, s, "completed", func() { writeT(t, ws, "big.txt", strings.Repeat(line, MaxDiffBytes/100+1000)) })
	patch, err := s.DiffTurn(ctx, 1)
	require.NoError(t, err)
	require.Less(t, len(patch), MaxDiffBytes+100)
	require.Contains(t, patch, "[diff truncated: ")
}

func TestCommitWithoutBeginCountsEverything(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	writeT(t, ws, "old.txt", "old\n")
	s := session(t, ws, ModeShadow, "nobegin")
	writeT(t, ws, "new.txt", "new\n")
	require.NoError(t, s.CommitTurn(ctx, "completed\nwith a\tnewline"))
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Equal(t, "completed with a newline", turns[0].Status)
	require.Equal(t, []string{"A new.txt", "A old.txt"}, paths(turns[0].Files))
	patch, err := s.DiffTurn(ctx, 1)
	require.NoError(t, err)
	require.Contains(t, patch, "+++ b/old.txt")
}

func TestTwoHandlesOnOneSessionStayConsistent(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	engineSide := session(t, ws, ModeShadow, "shared")
	rpcSide := session(t, ws, ModeShadow, "shared")
	turn(t, engineSide, "completed", func() { writeT(t, ws, "a.txt", "a1\n") })
	turn(t, engineSide, "completed", func() { writeT(t, ws, "a.txt", "a2\n") })

	_, err := rpcSide.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, "a1\n", readT(t, ws, "a.txt"))

	// The engine's handle goes on after the restore moved head.
	turn(t, engineSide, "completed", func() { writeT(t, ws, "b.txt", "b\n") })
	turns, err := rpcSide.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, numbers(turns))
	require.Equal(t, []string{"A b.txt"}, paths(turns[2].Files), "the restore itself is not counted in turn 3")
}

func TestRefsMovedByAnotherProcessAreReadAgain(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	s := session(t, repo, ModeNative, "moved")
	turn(t, s, "completed", func() { writeT(t, repo, "a.txt", "a\n") })
	// Another process forgets the session behind this one's back.
	for _, r := range strings.Fields(gitT(t, repo, "for-each-ref", "--format=%(refname)", "refs/agent/moved")) {
		gitT(t, repo, "update-ref", "-d", r)
	}
	writeT(t, repo, "b.txt", "b\n")
	require.ErrorIs(t, s.CommitTurn(ctx, "completed"), ErrGit, "the stale head is caught by compare-and-swap")
	turn(t, s, "completed", func() { writeT(t, repo, "c.txt", "c\n") })
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1}, numbers(turns))
	require.Equal(t, []string{"A c.txt"}, paths(turns[0].Files))
}
