package ignore_test

import (
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/tools/fs/ignore"
	"github.com/zqagent/sidecar/tools/fs/ignore/ignoretest"
)

// walk lists the files under root as a walker using the package does.
func walk(t testing.TB, root string, w *ignore.Walk) []string {
	r, err := os.OpenRoot(root)
	require.NoError(t, err)
	defer r.Close()
	var out []string
	var rec func(dir string, rules *ignore.Rules)
	rec = func(dir string, rules *ignore.Rules) {
		name := dir
		if name == "" {
			name = "."
		}
		entries, err := r.FS().(interface {
			ReadDir(string) ([]os.DirEntry, error)
		}).ReadDir(name)
		require.NoError(t, err)
		for _, e := range entries {
			rel := path.Join(dir, e.Name())
			if e.IsDir() && ignore.AlwaysSkipped(e.Name()) || rules.Ignored(rel, e.IsDir()) {
				continue
			}
			if e.IsDir() {
				rec(rel, w.Load(rules, rel, ignore.RootOpener(r, rel)))
				continue
			}
			out = append(out, rel)
		}
	}
	rec("", w.Load(nil, "", ignore.RootOpener(r, "."), ignore.ExcludeFile, ignore.FileName))
	slices.Sort(out)
	return out
}

// TestRules pins the rules every walker follows (the walkers' own tests
// check them against the same tree).
func TestRules(t *testing.T) {
	w := ignore.NewWalk()
	require.Equal(t, ignoretest.Visible, walk(t, ignoretest.Tree(t), w))
	require.Empty(t, w.Truncated())
	require.Empty(t, w.Note("x"))
}

func TestIgnoredPath(t *testing.T) {
	w := ignore.NewWalk()
	open := func(data string) ignore.Opener {
		return func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil }
	}
	r := w.Load(nil, "", open("build/\n"))
	r = w.Load(r, "src", open("gen\n"))
	require.True(t, r.IgnoredPath("build/x/y"))
	require.True(t, r.IgnoredPath("src/gen/z"))
	require.False(t, r.IgnoredPath("src/x"))
	require.False(t, r.IgnoredPath(""))
}

func TestAlwaysSkippedHidden(t *testing.T) {
	for name, want := range map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, "src": false, ".github": false} {
		require.Equal(t, want, ignore.AlwaysSkipped(name), name)
	}
	for name, want := range map[string]bool{".env": true, "a": false, ".": false, "..": false} {
		require.Equal(t, want, ignore.Hidden(name), name)
	}
}

// bomb is an ignore file of n distinct short patterns, of at most max
// bytes.
func bomb(n, max int) string {
	var b strings.Builder
	for i := 0; i < n && b.Len() < max-16; i++ {
		fmt.Fprintf(&b, "p%x\n", i)
	}
	return b.String()
}

// TestWalkBounds: past MaxPatterns or MaxBytes in one walk, the rest is
// not loaded, the walk says where, and every path below reports
// !Complete; the patterns that were loaded still apply.
func TestWalkBounds(t *testing.T) {
	open := func(data string) ignore.Opener {
		return func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil }
	}
	t.Run("patterns", func(t *testing.T) {
		w := ignore.NewWalk()
		r := w.Load(nil, "", open(bomb(ignore.MaxPatterns+5, 1<<30)))
		require.False(t, r.Complete())
		require.True(t, r.Ignored("p0", false))
		require.True(t, r.Ignored(fmt.Sprintf("p%x", ignore.MaxPatterns-1), false))
		require.False(t, r.Ignored(fmt.Sprintf("p%x", ignore.MaxPatterns), false), "past the bound")
		require.Equal(t, []string{""}, w.Truncated())
		require.Contains(t, w.Note("files below were not searched"), "ignore rules truncated: the ignore files of . were not fully loaded")
		// The budget is the walk's: a later file loads nothing, and says so.
		sub := w.Load(r, "a/b", open("x\n"))
		require.False(t, sub.Ignored("a/b/x", false))
		require.Equal(t, []string{"", "a/b"}, w.Truncated())
	})
	t.Run("bytes", func(t *testing.T) {
		w := ignore.NewWalk()
		half := strings.Repeat("#"+strings.Repeat("c", 1000)+"\n", ignore.MaxBytes/1002/2)
		r := w.Load(nil, "", open(half+"a\n"))
		require.True(t, r.Complete())
		r = w.Load(r, "x", open(half+half+"b\n"))
		require.False(t, r.Complete())
		require.True(t, r.Ignored("a", false))
		require.False(t, r.Ignored("x/b", false))
		require.True(t, w.Load(r, "x/y", open("")).Complete() == false, "below a cut level nothing is complete")
		require.Equal(t, []string{"x"}, w.Truncated())
	})
	t.Run("wildcard patterns", func(t *testing.T) {
		w := ignore.NewWalk()
		var b strings.Builder
		for i := range ignore.MaxGlobs + 1 {
			fmt.Fprintf(&b, "g%d?\n", i)
		}
		r := w.Load(nil, "", open(b.String()+"lit\n"))
		require.False(t, r.Complete())
		require.True(t, r.Ignored("g0x", false))
		require.True(t, r.Ignored(fmt.Sprintf("g%dx", ignore.MaxGlobs-1), false))
		require.False(t, r.Ignored(fmt.Sprintf("g%dx", ignore.MaxGlobs), false), "past the bound")
		r = w.Load(r, "sub", open("name\n"))
		require.True(t, r.Ignored("sub/name", false), "literal patterns still load")
	})
	t.Run("empty and missing files add no level", func(t *testing.T) {
		w := ignore.NewWalk()
		missing := func(string) (io.ReadCloser, error) { return nil, os.ErrNotExist }
		r := w.Load(nil, "", open("a\n"))
		require.Same(t, r, w.Load(r, "x", missing))
		require.Same(t, r, w.Load(r, "x", open("# only a comment\n\n")))
	})
}

// TestBombCost: loading a 1 MiB ignore file of short distinct patterns
// and matching against it costs little memory: no regular expression per
// pattern (github.com/sabhiram/go-gitignore used 1.9 GB for this file).
func TestBombCost(t *testing.T) {
	data := bomb(1<<20, 1<<20)
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := ignore.NewWalk()
			r := w.Load(nil, "", func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil })
			for i := range 1000 {
				r.Ignored(fmt.Sprintf("dir/q%x.go", i), false)
			}
		}
	}).AllocedBytesPerOp()
	require.Less(t, allocs, int64(8<<20), "bytes allocated to load and match a 1 MiB ignore file")
}
