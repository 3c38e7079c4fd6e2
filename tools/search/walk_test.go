package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools/fs/ignore/ignoretest"
)

// TestGrepIgnoreRules: grep searches exactly the files the pinned ignore
// rules let through (package ignore's TestRules).
func TestGrepIgnoreRules(t *testing.T) {
	ws, err := confine.New(ignoretest.Tree(t))
	require.NoError(t, err)
	res, err := Grep(context.Background(), ws, Query{Pattern: "needle|gen/|local", MaxResults: MaxMaxResults})
	require.NoError(t, err)
	var files []string
	for _, l := range res.Lines {
		if len(files) == 0 || files[len(files)-1] != l.Path {
			files = append(files, l.Path)
		}
	}
	slices.Sort(files)
	require.Equal(t, ignoretest.Visible, files)
	require.Empty(t, res.IgnoreNote)
}

// TestGrepIgnoreBomb: past the walk's ignore bounds grep says the rules
// were truncated and reads no file below the directories whose rules it
// could not load whole; the rest of the tree is searched.
func TestGrepIgnoreBomb(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-16; i++ {
		fmt.Fprintf(&b, "p%x\n", i)
	}
	writeTree(t, root, map[string]string{
		"a/.gitignore": b.String(),
		"a/x.go":       "needle",
		"a/sub/y.go":   "needle",
		"b/z.go":       "needle",
		"c/.gitignore": "q\n",
		"c/w.go":       "needle",
	})
	ws, err := confine.New(root)
	require.NoError(t, err)
	res, err := Grep(context.Background(), ws, Query{Pattern: "needle"})
	require.NoError(t, err)
	var files []string
	for _, l := range res.Lines {
		files = append(files, l.Path)
	}
	require.Equal(t, []string{"b/z.go"}, files, "a's rules were cut; c's did not fit in the walk's budget")
	require.Contains(t, res.IgnoreNote, "ignore rules truncated: the ignore files of a, c were not fully loaded")
	require.Contains(t, res.Text(false, maxOutputBytes), "grep did not search the files below them")
}

// TestGrepStopsOnCancel counts, not times: once the walk has seen its
// context cancelled, it visits no further entry.
func TestGrepStopsOnCancel(t *testing.T) {
	root := t.TempDir()
	for d := range 5 {
		dir := filepath.Join(root, fmt.Sprintf("d%d", d))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for f := range 200 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte("x\n"), 0o644))
		}
	}
	ws, err := confine.New(root)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	visited, after := 0, 0 // the walk runs on Grep's goroutine: no lock needed
	_, err = Grep(ctx, ws, Query{Pattern: "needle", onVisit: func(string) {
		if ctx.Err() != nil {
			after++
			return
		}
		if visited++; visited == 50 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 50, visited)
	require.Zero(t, after, "entries visited after the cancel was seen")
}

// BenchmarkGrepIgnoreBomb greps a tree of 1,000 files without ignore
// files, with 10,000 patterns at the root (every file is matched against
// them and searched), with a 1 MiB .gitignore at the root, with ten more
// nested ones, and with 1 MiB of wildcard patterns (the rules are cut:
// nothing below is read): the bombs add
// little time and memory (B/op) to the search (README, Figures).
func BenchmarkGrepIgnoreBomb(b *testing.B) {
	for _, v := range []struct {
		name    string
		variant int
	}{{"none", ignoretest.NoBomb}, {"10k-patterns", ignoretest.FitBomb}, {"1MiB", ignoretest.RootBomb}, {"1MiB+10-nested", ignoretest.NestedBomb}, {"1MiB-globs", ignoretest.GlobBomb}} {
		b.Run(v.name, func(b *testing.B) {
			ws, err := confine.New(ignoretest.BombTree(b, v.variant))
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Grep(context.Background(), ws, Query{Pattern: "needle", MaxResults: MaxMaxResults}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
