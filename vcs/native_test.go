package vcs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// userState is what the user sees of their repository.
type userState struct {
	head, branch, cached, log, userRefs, indexSum string
	status                                        []string
}

func observe(t *testing.T, repo string) userState {
	t.Helper()
	idx, err := os.ReadFile(filepath.Join(repo, ".git", "index"))
	require.NoError(t, err)
	sum := sha256.Sum256(idx)
	return userState{
		head:     gitT(t, repo, "rev-parse", "HEAD"),
		branch:   gitT(t, repo, "symbolic-ref", "HEAD"),
		cached:   gitT(t, repo, "diff", "--cached"),
		log:      gitT(t, repo, "log", "--format=%H %s"),
		userRefs: gitT(t, repo, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
		indexSum: hex.EncodeToString(sum[:]),
		status:   strings.Split(strings.TrimSpace(gitT(t, repo, "status", "--porcelain", "--untracked-files=all")), "\n"),
	}
}

// without drops the porcelain lines of the given paths.
func without(lines []string, paths ...string) []string {
	var out []string
next:
	for _, l := range lines {
		for _, p := range paths {
			if strings.HasSuffix(l, " "+p) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

func TestNativeModeLeavesTheUsersRepositoryAlone(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	// The user has work in progress: a staged change, an unstaged one, an
	// untracked file, and a second branch.
	gitT(t, repo, "branch", "feature")
	writeT(t, repo, "README.md", "# readme\nstaged line\n")
	gitT(t, repo, "add", "README.md")
	writeT(t, repo, "tracked.txt", "tracked v1\nunstaged line\n")
	writeT(t, repo, "notes.txt", "untracked\n")
	// Repository config that must not leak into snapshots.
	gitT(t, repo, "config", "commit.gpgSign", "true")
	gitT(t, repo, "config", "gpg.program", "false")
	gitT(t, repo, "config", "user.name", "The User")
	before := observe(t, repo)

	s := session(t, repo, ModeAuto, "native-1")
	require.Equal(t, ModeNative, s.Plan().Mode)
	turn(t, s, "completed", func() {
		writeT(t, repo, "agent.go", "package agent\n")
		writeT(t, repo, "tracked.txt", "tracked v2 by the agent\n")
	})
	turn(t, s, "completed", func() {})
	turn(t, s, "completed", func() { writeT(t, repo, "agent.go", "package agent // v2\n") })

	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, numbers(turns))
	require.Equal(t, []string{"A agent.go", "M tracked.txt"}, paths(turns[0].Files))
	_, err = s.DiffTurn(ctx, 1)
	require.NoError(t, err)
	_, err = s.RestoreTurn(ctx, 1, RestoreOptions{DryRun: true})
	require.NoError(t, err)

	after := observe(t, repo)
	require.Equal(t, before.head, after.head, "HEAD")
	require.Equal(t, before.branch, after.branch, "current branch")
	require.Equal(t, before.cached, after.cached, "staged changes")
	require.Equal(t, before.log, after.log, "git log")
	require.Equal(t, before.userRefs, after.userRefs, "branches and tags")
	require.Equal(t, before.indexSum, after.indexSum, "the user's index file is byte-identical")
	require.Equal(t, without(before.status, "tracked.txt", "agent.go"), without(after.status, "tracked.txt", "agent.go"),
		"status differs only in the files the turns changed")
	require.Contains(t, after.status, "?? agent.go")
	require.NoDirExists(t, filepath.Join(repo, ".agent"), "native mode writes nothing into the work tree")

	// The snapshots carry the fixed identity, not the user's.
	who := gitT(t, repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "refs/agent/native-1/head")
	require.Equal(t, "zqagent <agent@zqagent.invalid>|zqagent <agent@zqagent.invalid>\n", who)
	// The turns hang off the user's history nowhere.
	require.Empty(t, strings.TrimSpace(gitT(t, repo, "branch", "--contains", "refs/agent/native-1/turns/1")))
}

func TestRepositoryHooksNeverRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell hooks")
	}
	ctx := context.Background()
	repo := newRepo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	script := "#!/bin/sh\necho \"$0\" >> '" + marker + "'\nexit 0\n"
	hooks := []string{"pre-commit", "post-commit", "commit-msg", "reference-transaction", "post-index-change", "pre-auto-gc", "post-checkout"}
	for _, dir := range []string{filepath.Join(repo, ".git", "hooks"), filepath.Join(repo, ".githooks")} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, h := range hooks {
			require.NoError(t, os.WriteFile(filepath.Join(dir, h), []byte(script), 0o755))
		}
	}
	// An fsmonitor command is code too.
	fsmon := filepath.Join(repo, ".githooks", "fsmonitor")
	require.NoError(t, os.WriteFile(fsmon, []byte(script), 0o755))
	gitT(t, repo, "config", "core.fsmonitor", fsmon)

	// The hooks are live: a plain commit by the user runs them.
	writeT(t, repo, "warmup.txt", "w\n")
	gitT(t, repo, "add", "warmup.txt")
	gitT(t, repo, "commit", "-q", "-m", "warmup")
	require.FileExists(t, marker, "test setup: the hooks should run for the user's own commit")
	require.NoError(t, os.Remove(marker))
	gitT(t, repo, "config", "core.hooksPath", ".githooks")
	gitT(t, repo, "commit", "-q", "--allow-empty", "-m", "warmup 2")
	require.FileExists(t, marker, "test setup: core.hooksPath hooks should run too")
	require.NoError(t, os.Remove(marker))

	s := session(t, repo, ModeNative, "hooks")
	turn(t, s, "completed", func() { writeT(t, repo, "a.txt", "a\n") })
	turn(t, s, "completed", func() { writeT(t, repo, "a.txt", "b\n") })
	_, err := s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	_, err = s.ListTurns(ctx)
	require.NoError(t, err)
	_, err = s.DiffTurn(ctx, 2)
	require.NoError(t, err)
	require.NoError(t, s.Forget(ctx))

	_, err = os.Stat(marker)
	require.ErrorIs(t, err, os.ErrNotExist, "a repository hook ran")
}

func TestParentRepositoryIsNotUsed(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t) // say, a dotfiles repository at $HOME
	before := gitT(t, repo, "count-objects", "-v")
	ws := filepath.Join(repo, "pkg")
	writeT(t, ws, "lib.go", "package pkg\n")
	s := session(t, ws, ModeAuto, "sub")
	require.Equal(t, ModeShadow, s.Plan().Mode, s.Plan().Status)
	require.Contains(t, s.Plan().Status, "no .git")
	turn(t, s, "completed", func() {
		writeT(t, ws, "lib.go", "package pkg // changed\n")
		writeT(t, repo, "outside.txt", "not in the workspace\n")
	})
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Equal(t, []string{"M lib.go"}, paths(turns[0].Files), "only the workspace's files count")
	require.Empty(t, gitT(t, repo, "for-each-ref", "refs/agent/"), "nothing was written into the parent repository")
	require.Equal(t, before, gitT(t, repo, "count-objects", "-v"))
}
