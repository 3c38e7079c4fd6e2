//go:build !windows

package vcs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// linkT replaces name (relative to dir) with a symlink to target.
func linkT(t *testing.T, dir, rel, target string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.RemoveAll(p))
	require.NoError(t, os.Symlink(target, p))
}

// emptyDir reports whether dir holds nothing.
func emptyDir(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries) == 0
}

// TestObjectStoreOutsideFallsBackToShadow: a .git that is a real folder in
// the workspace but whose objects and refs are links into another
// repository, whose alternates name another repository's objects, or
// whose private folder is a link outside, is refused: snapshots go to the
// shadow repository, and neither the other repository nor the outside
// folder is written.
func TestObjectStoreOutsideFallsBackToShadow(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, ws, other, outside string)
	}{
		{"objects and refs linked into another repository", func(t *testing.T, ws, other, _ string) {
			linkT(t, ws, ".git/objects", filepath.Join(other, ".git", "objects"))
			linkT(t, ws, ".git/refs", filepath.Join(other, ".git", "refs"))
		}},
		{"alternates naming another repository", func(t *testing.T, ws, other, _ string) {
			rel, err := filepath.Rel(filepath.Join(ws, ".git", "objects"), filepath.Join(other, ".git", "objects"))
			require.NoError(t, err)
			writeT(t, ws, ".git/objects/info/alternates", rel+"\n")
		}},
		{"private folder linked outside", func(t *testing.T, ws, _, outside string) {
			linkT(t, ws, ".git/zqagent", outside)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newRepo(t)
			outside := realTemp(t)
			before := gitT(t, other, "count-objects", "-v")
			ws := newRepo(t)
			tc.make(t, ws, other, outside)
			writeT(t, ws, "mine.txt", "mine\n")

			s := session(t, ws, ModeAuto, "objects")
			require.Equal(t, ModeShadow, s.Plan().Mode, s.Plan().Status)
			require.Contains(t, s.Plan().Status, "outside the project")
			turn(t, s, "completed", func() { writeT(t, ws, "mine.txt", "mine changed\n") })
			turns, err := s.ListTurns(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{"M mine.txt"}, paths(turns[0].Files))

			require.Empty(t, gitT(t, other, "for-each-ref", "refs/agent/"), "refs written into the other repository")
			require.Equal(t, before, gitT(t, other, "count-objects", "-v"), "objects written into the other repository")
			require.True(t, emptyDir(t, outside), "the private folder's link was followed")
			p := ResolvePlan(ctx, ws, Config{ShadowRoot: testShadowRoot, Mode: ModeNative})
			require.Equal(t, ModeOff, p.Mode, "native mode never uses a repository that leads outside")
		})
	}
}

// TestObjectStoreTurnedOutsideMidSession: a native session whose .git
// gains a way out after the plan was made (alternates, a linked refs
// folder, a private folder replaced by a link) refuses every git run:
// snapshots, listing and diffs, and writes nothing outside.
func TestObjectStoreTurnedOutsideMidSession(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		make func(t *testing.T, ws, other, outside string)
	}{
		{"alternates", func(t *testing.T, ws, other, _ string) {
			writeT(t, ws, ".git/objects/info/alternates", filepath.Join(other, ".git", "objects")+"\n")
		}},
		{"refs/agent linked", func(t *testing.T, ws, other, _ string) {
			linkT(t, ws, ".git/refs/agent", filepath.Join(other, ".git", "refs", "heads"))
		}},
		{"private folder replaced by a link", func(t *testing.T, ws, _, outside string) {
			linkT(t, ws, ".git/zqagent", outside)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := newRepo(t)
			outside := realTemp(t)
			ws := newRepo(t)
			s := session(t, ws, ModeAuto, "turned")
			require.Equal(t, ModeNative, s.Plan().Mode)
			turn(t, s, "completed", func() { writeT(t, ws, "a.txt", "a\n") })
			before := gitT(t, other, "for-each-ref")

			tc.make(t, ws, other, outside)
			require.ErrorContains(t, s.BeginTurn(ctx), "outside the project")
			require.ErrorContains(t, s.CommitTurn(ctx, "completed"), "outside the project")
			_, err := s.ListTurns(ctx)
			require.ErrorContains(t, err, "outside the project")
			_, err = s.DiffTurn(ctx, 1)
			require.ErrorContains(t, err, "outside the project")
			require.Equal(t, before, gitT(t, other, "for-each-ref"), "the other repository's refs changed")
			require.True(t, emptyDir(t, outside), "something was written outside")
		})
	}
}

// TestPrivateFolderLinkIsNotFollowed: the snapshots' private folder is
// never a link, even one that stays in the workspace (the repository
// itself is fine, so the plan is native): the snapshot refuses, saying
// so, and writes nothing where the link leads.
func TestPrivateFolderLinkIsNotFollowed(t *testing.T) {
	ctx := context.Background()
	ws := newRepo(t)
	require.NoError(t, os.Mkdir(filepath.Join(ws, "elsewhere"), 0o755))
	linkT(t, ws, ".git/zqagent", "../elsewhere")
	s := session(t, ws, ModeAuto, "linked")
	require.Equal(t, ModeNative, s.Plan().Mode, s.Plan().Status)
	err := s.BeginTurn(ctx)
	require.ErrorContains(t, err, "refuse to follow")
	require.True(t, emptyDir(t, filepath.Join(ws, "elsewhere")), "the private folder's link was followed")
	require.ErrorContains(t, s.Forget(ctx), "refuse to follow")
}
