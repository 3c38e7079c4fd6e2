package conflict

import (
	"io/fs"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/tools/fs/ignore/ignoretest"
)

// TestWatcherIgnoreRules: the watcher watches exactly the directories the
// pinned ignore rules let a walk into (package ignore's TestRules): those
// that hold a visible file in the tree.
func TestWatcherIgnoreRules(t *testing.T) {
	root := ignoretest.Tree(t)
	real, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	w := newWatcher(t, real, WatcherOptions{})
	want := map[string]bool{}
	for _, f := range ignoretest.Visible {
		for d := path.Dir(f); ; d = path.Dir(d) {
			want[d] = true
			if d == "." {
				break
			}
		}
	}
	require.NoError(t, filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(real, p)
		require.NoError(t, err)
		require.Equal(t, want[filepath.ToSlash(rel)], w.Covered(filepath.Join(p, "f")), "directory %s", rel)
		return nil
	}))
	require.Equal(t, len(want), w.Stats().Watches)
}
