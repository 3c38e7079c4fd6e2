package vcs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// markerProg writes a program that appends tag to marker and passes its
// input through (a filter that works).
func markerProg(t *testing.T, marker, tag string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), tag+".sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho "+tag+" >> '"+marker+"'\nexec cat\n"), 0o755))
	return p
}

// TestFilterDriversNeverRun: the repository's .git/config names clean,
// smudge and process filters that .gitattributes (and info/attributes)
// select; a turn's snapshots, listing, diff and restore run none.
func TestFilterDriversNeverRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell filters")
	}
	ctx := context.Background()
	repo := newRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	gitT(t, repo, "config", "filter.x.clean", markerProg(t, marker, "clean"))
	gitT(t, repo, "config", "filter.x.smudge", markerProg(t, marker, "smudge"))
	gitT(t, repo, "config", "filter.x.required", "true")
	gitT(t, repo, "config", "filter.y.process", markerProg(t, marker, "process"))
	gitT(t, repo, "config", "filter.z.clean", markerProg(t, marker, "info-clean"))
	writeT(t, repo, ".gitattributes", "*.txt filter=x\n*.md filter=y\n")
	writeT(t, repo, ".git/info/attributes", "*.go filter=z\n")
	// The filter is live: the user's own git add runs it.
	writeT(t, repo, "live.txt", "live\n")
	gitT(t, repo, "add", "live.txt")
	require.FileExists(t, marker, "test setup: the clean filter should run for the user's git add")
	require.NoError(t, os.Remove(marker))

	s := session(t, repo, ModeAuto, "filters")
	require.Equal(t, ModeNative, s.Plan().Mode, s.Plan().Status)
	turn(t, s, "completed", func() {
		writeT(t, repo, "tracked.txt", "changed by the turn\n")
		writeT(t, repo, "README.md", "# changed\n")
		writeT(t, repo, "main.go", "package main\n")
	})
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	_, err = s.DiffTurn(ctx, 1)
	require.NoError(t, err)
	writeT(t, repo, "tracked.txt", "changed again\n")
	_, err = s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, "changed by the turn\n", readT(t, repo, "tracked.txt"))
	require.NoFileExists(t, marker, "a filter driver of the repository ran")
}

// TestReadyMadeShadowIsIgnored: a project without .git that ships its own
// .agent/vcs (with a filter in its config) never gets it used: snapshots
// go to the shadow repository in the data dir, and the filter never runs.
func TestReadyMadeShadowIsIgnored(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell filters")
	}
	ctx := context.Background()
	ws := realTemp(t)
	marker := filepath.Join(t.TempDir(), "ran")
	planted := filepath.Join(ws, ".agent", "vcs")
	gitT(t, ws, "init", "-q", "--bare", planted)
	gitT(t, ws, "--git-dir", planted, "config", "core.bare", "false")
	gitT(t, ws, "--git-dir", planted, "config", "filter.x.clean", markerProg(t, marker, "clean"))
	gitT(t, ws, "--git-dir", planted, "config", "core.fsmonitor", markerProg(t, marker, "fsmonitor"))
	writeT(t, ws, ".gitattributes", "* filter=x\n")
	writeT(t, ws, "a.txt", "a\n")
	before := gitT(t, ws, "--git-dir", planted, "count-objects", "-v")

	s := session(t, ws, ModeAuto, "planted")
	require.Equal(t, ModeShadow, s.Plan().Mode)
	require.Equal(t, ShadowGitDir(testShadowRoot, ws), s.Plan().GitDir)
	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a changed\n") })
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"M a.txt"}, paths(turns[0].Files))
	require.NoFileExists(t, marker, "the planted repository's programs ran")
	require.Equal(t, before, gitT(t, ws, "--git-dir", planted, "count-objects", "-v"), "the planted repository was written")
}

// TestForeignRepositoryFallsBackToShadow: a .git file or core.worktree
// pointing at another repository is refused; snapshots go to the shadow
// repository and the other repository is never written.
func TestForeignRepositoryFallsBackToShadow(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, other string) string
	}{
		{"foreign gitfile", func(t *testing.T, other string) string {
			ws := realTemp(t)
			writeT(t, ws, ".git", "gitdir: "+filepath.Join(other, ".git")+"\n")
			return ws
		}},
		{"core.worktree outside", func(t *testing.T, other string) string {
			ws := newRepo(t)
			gitT(t, ws, "config", "core.worktree", other)
			return ws
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newRepo(t)
			before := gitT(t, other, "count-objects", "-v")
			ws := tc.make(t, other)
			writeT(t, ws, "mine.txt", "mine\n")
			s := session(t, ws, ModeAuto, "foreign")
			require.Equal(t, ModeShadow, s.Plan().Mode, s.Plan().Status)
			require.Contains(t, s.Plan().Status, "outside the project")
			turn(t, s, "completed", func() { writeT(t, ws, "mine.txt", "mine changed\n") })
			turns, err := s.ListTurns(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{"M mine.txt"}, paths(turns[0].Files))
			require.Empty(t, gitT(t, other, "for-each-ref", "refs/agent/"))
			require.Equal(t, before, gitT(t, other, "count-objects", "-v"), "the other repository was written")

			p := ResolvePlan(ctx, ws, Config{ShadowRoot: testShadowRoot, Mode: ModeNative})
			require.Equal(t, ModeOff, p.Mode, "native mode never uses a foreign repository")
		})
	}
}

// TestRepositoryTurnedForeignMidSession: a native session whose .git is
// pointed outside after the plan was made refuses to snapshot.
func TestRepositoryTurnedForeignMidSession(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	other := realTemp(t)
	s := session(t, ws, ModeAuto, "turned")
	require.Equal(t, ModeNative, s.Plan().Mode)
	turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a\n") })
	gitT(t, ws, "config", "core.worktree", other)
	require.ErrorContains(t, s.BeginTurn(ctx), "outside the project")
}

func TestShadowNeedsADataDir(t *testing.T) {
	p := ResolvePlan(context.Background(), realTemp(t), Config{Mode: ModeAuto})
	require.Equal(t, ModeOff, p.Mode)
	require.Contains(t, p.Status, "data directory")
}
