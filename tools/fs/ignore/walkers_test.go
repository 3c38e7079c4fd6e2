package ignore_test

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/filesearch"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/fs"
	"github.com/zqagent/sidecar/tools/fs/ignore/ignoretest"
	"github.com/zqagent/sidecar/tools/search"
)

// TestWalkersAgree walks the pinned tree (.git/info/exclude, .hg, .svn,
// node_modules, nested .gitignore files and negations, a nested
// repository's own exclude file) with list_files, grep, the conflict
// watcher and files.search's index (from the root), from the root and
// from below it (an ignored directory named explicitly included): they
// see the same files, the ones the rules let through.
func TestWalkersAgree(t *testing.T) {
	root := ignoretest.Tree(t)
	real, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	ws, err := confine.New(real)
	require.NoError(t, err)
	w, err := conflict.NewWatcher(real, conflict.WatcherOptions{})
	require.NoError(t, err)
	defer w.Close()

	for _, tc := range []struct {
		start string
		want  []string
	}{
		{".", ignoretest.Visible},
		{"src", under("src", ignoretest.Visible)},
		{"src/sub", under("src/sub", ignoretest.Visible)},
		{"build", []string{"build/out.go"}}, // named explicitly; *.log still holds inside
	} {
		listed := listFiles(t, ws, tc.start)
		grepped := grepFiles(t, ws, tc.start)
		require.Equal(t, tc.want, listed, "list_files %s", tc.start)
		require.Equal(t, listed, grepped, "grep %s sees what list_files sees", tc.start)
	}

	// files.search's index holds, from the root, what the others see.
	require.Equal(t, ignoretest.Visible, indexedFiles(t, real), "files.search's index")

	// The watcher watches exactly the directories that hold a visible file
	// (and their parents): the directories the other two walk into.
	want := map[string]bool{}
	for _, f := range ignoretest.Visible {
		for d := path.Dir(f); ; d = path.Dir(d) {
			want[d] = true
			if d == "." {
				break
			}
		}
	}
	for _, dir := range []string{".", ".git", ".git/info", ".hg", ".svn", "node_modules", "node_modules/m", "build", "docs", "docs/deep",
		"src", "src/gen", "src/sub", "other", "other/.hg", "other/.svn", "other/node_modules", "other/gen", "nested", "nested/.git"} {
		require.Equal(t, want[dir], w.Covered(filepath.Join(real, filepath.FromSlash(dir), "f")), "watcher on %s", dir)
	}
}

// indexedFiles is what files.search's index holds (directories left out).
func indexedFiles(t *testing.T, root string) []string {
	ix, err := filesearch.New(root, filesearch.Options{})
	require.NoError(t, err)
	defer ix.Close()
	res, err := ix.Search(context.Background(), "", filesearch.MaxLimit)
	require.NoError(t, err)
	var files []string
	for _, m := range res.Matches {
		if !strings.HasSuffix(m.Path, "/") {
			files = append(files, m.Path)
		}
	}
	slices.Sort(files)
	return files
}

func under(dir string, files []string) []string {
	var out []string
	for _, f := range files {
		if strings.HasPrefix(f, dir+"/") {
			out = append(out, f)
		}
	}
	return out
}

func listFiles(t *testing.T, ws *confine.Workspace, start string) []string {
	out, err := fs.ListFiles(context.Background(), ws, start, fs.MaxListDepth, true)
	require.NoError(t, err)
	var files []string
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); !strings.HasSuffix(l, "/") && !strings.HasPrefix(l, "[") {
			files = append(files, l)
		}
	}
	slices.Sort(files)
	return files
}

func grepFiles(t *testing.T, ws *confine.Workspace, start string) []string {
	res, err := search.Grep(context.Background(), ws, search.Query{Pattern: "needle|gen/|local|kept", Path: start, MaxResults: search.MaxMaxResults})
	require.NoError(t, err)
	require.Empty(t, res.IgnoreNote)
	var files []string
	for _, l := range res.Lines {
		if !slices.Contains(files, l.Path) {
			files = append(files, l.Path)
		}
	}
	slices.Sort(files)
	return files
}
