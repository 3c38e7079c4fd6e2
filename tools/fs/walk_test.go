package fs

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools/fs/ignore"
	"github.com/zqagent/sidecar/tools/fs/ignore/ignoretest"
)

// TestListFilesIgnoreRules: list_files shows exactly the files the pinned
// ignore rules let through (package ignore's TestRules).
func TestListFilesIgnoreRules(t *testing.T) {
	root := ignoretest.Tree(t)
	ws, err := confine.New(root)
	require.NoError(t, err)
	out, err := ListFiles(context.Background(), ws, ".", MaxListDepth, true)
	require.NoError(t, err)
	var files []string
	for l := range strings.Lines(out) {
		l = strings.TrimSpace(l)
		if !strings.HasSuffix(l, "/") {
			files = append(files, l)
		}
	}
	slices.Sort(files)
	require.Equal(t, ignoretest.Visible, files)
}

// TestListFilesIgnoreBomb: past the walk's ignore bounds the listing says
// the rules were truncated, and lists by the rules that were loaded.
func TestListFilesIgnoreBomb(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-16; i++ {
		fmt.Fprintf(&b, "p%x\n", i)
	}
	write(t, filepath.Join(root, ".gitignore"), b.String())
	write(t, filepath.Join(root, "p0"), "loaded rule: ignored")
	write(t, filepath.Join(root, fmt.Sprintf("p%x", ignore.MaxPatterns+10)), "past the bound: listed")
	write(t, filepath.Join(root, "main.go"), "")
	ws, err := confine.New(root)
	require.NoError(t, err)
	out, err := ListFiles(context.Background(), ws, ".", 2, false)
	require.NoError(t, err)
	require.Contains(t, out, "main.go\n")
	require.Contains(t, out, fmt.Sprintf("p%x\n", ignore.MaxPatterns+10))
	require.NotContains(t, out, "p0\n")
	require.Contains(t, out, "[ignore rules truncated: the ignore files of . were not fully loaded")
}

// TestListFilesStopsOnCancel counts, not times: once the walk has seen its
// context cancelled, it visits no further entry.
func TestListFilesStopsOnCancel(t *testing.T) {
	root := t.TempDir()
	for d := range 5 {
		for f := range 200 {
			write(t, filepath.Join(root, fmt.Sprintf("d%d", d), fmt.Sprintf("f%03d", f)), "")
		}
	}
	ws, err := confine.New(root)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	visited, after := 0, 0
	_, err = listFiles(ctx, ws, ".", 3, false, func(string) {
		if ctx.Err() != nil {
			after++
			return
		}
		if visited++; visited == 50 {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 50, visited)
	require.Zero(t, after, "entries visited after the cancel was seen")
}

// BenchmarkListFilesIgnoreBomb lists a tree of 1,000 files (depth 3)
// without ignore files, with 10,000 patterns at the root, with a 1 MiB
// .gitignore at the root, and with ten more nested ones: the bombs add
// little time and memory (B/op) to the listing (README, Figures).
func BenchmarkListFilesIgnoreBomb(b *testing.B) {
	for _, v := range []struct {
		name    string
		variant int
	}{{"none", ignoretest.NoBomb}, {"10k-patterns", ignoretest.FitBomb}, {"1MiB", ignoretest.RootBomb}, {"1MiB+10-nested", ignoretest.NestedBomb}, {"1MiB-globs", ignoretest.GlobBomb}} {
		b.Run(v.name, func(b *testing.B) {
			ws, err := confine.New(ignoretest.BombTree(b, v.variant))
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ListFiles(context.Background(), ws, ".", 3, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
