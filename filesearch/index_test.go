package filesearch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/filesearch"
	"github.com/zqagent/sidecar/tools/conflict"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// tree writes files (slash path -> content; a path ending in "/" is an
// empty directory) into a new directory and returns it, symlinks resolved.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return root
}

func newIndex(t testing.TB, root string, opts filesearch.Options) *filesearch.Index {
	t.Helper()
	ix, err := filesearch.New(root, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ix.Close()) })
	return ix
}

func search(t testing.TB, ix *filesearch.Index, q string) []filesearch.Match {
	t.Helper()
	res, err := ix.Search(context.Background(), q, filesearch.MaxLimit)
	require.NoError(t, err)
	return res.Matches
}

func paths(ms []filesearch.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Path
	}
	return out
}

// The ranking puts what a person means first: an exact last element before
// a scattered match, a match in the last element before one across
// directories, the shorter path on a tie.
func TestRanking(t *testing.T) {
	root := tree(t, map[string]string{
		"server.go":                  "",
		"s/e/r/v/e/r.go":             "",
		"src/service/errors/view.go": "",
		"cmd/server/main.go":         "",
		"internal/domain/agent.go":   "",
		"internal/server/handler.go": "",
		"web/src/Server.tsx":         "",
		"docs/serve.md":              "",
		"a/very/deep/dir/serve.md":   "",
		"README.md":                  "",
	})
	ix := newIndex(t, root, filesearch.Options{})
	for _, tc := range []struct {
		query string
		first []string // the first results, in order
		later []string // ranked after all of first
	}{
		{"server.go", []string{"server.go"}, []string{"s/e/r/v/e/r.go", "src/service/errors/view.go"}},
		{"main.go", []string{"cmd/server/main.go"}, []string{"internal/domain/agent.go"}},
		{"serve", []string{"docs/serve.md", "a/very/deep/dir/serve.md"}, []string{"server.go", "s/e/r/v/e/r.go"}},
		{"server", []string{"server.go", "cmd/server/", "internal/server/", "web/src/Server.tsx"}, []string{"cmd/server/main.go", "s/e/r/v/e/r.go"}},
		{"handler", []string{"internal/server/handler.go"}, nil},
		{"readme", []string{"README.md"}, nil},
	} {
		got := paths(search(t, ix, tc.query))
		require.GreaterOrEqual(t, len(got), len(tc.first), "%q: %v", tc.query, got)
		require.Equal(t, tc.first, got[:len(tc.first)], "%q: %v", tc.query, got)
		for _, p := range tc.later {
			require.Contains(t, got[len(tc.first):], p, "%q: %v", tc.query, got)
		}
	}
	require.Empty(t, search(t, ix, "zzz"))
}

// Positions are UTF-16 offsets of the matched characters, ascending: what
// a TypeScript shell highlights with string indices.
func TestPositions(t *testing.T) {
	root := tree(t, map[string]string{
		"a/b/serve.go":   "",
		"dé/ü𝄞x.go":      "", // é, ü: one unit each; 𝄞: two
		"日本/テスト_file.md": "",
	})
	ix := newIndex(t, root, filesearch.Options{})
	for _, tc := range []struct {
		query, path string
		pos         []int
	}{
		{"serve", "a/b/serve.go", []int{4, 5, 6, 7, 8}},
		{"xgo", "dé/ü𝄞x.go", []int{6, 8, 9}},
		{"üx", "dé/ü𝄞x.go", []int{3, 6}},
		{"de", "dé/", []int{0, 1}}, // é folds to e
		{"テスト", "日本/テスト_file.md", []int{3, 4, 5}},
		{"a/b", "a/b/", []int{0, 1, 2}},
	} {
		ms := search(t, ix, tc.query)
		i := slices.IndexFunc(ms, func(m filesearch.Match) bool { return m.Path == tc.path })
		require.GreaterOrEqual(t, i, 0, "%q finds %s: %v", tc.query, tc.path, paths(ms))
		require.Equal(t, tc.pos, ms[i].Positions, "%q in %s", tc.query, tc.path)
		// The offsets pick out the query's characters, as JavaScript reads
		// the string.
		units := utf16.Encode([]rune(tc.path))
		var picked []uint16
		for _, p := range ms[i].Positions {
			picked = append(picked, units[p])
		}
		require.Equal(t, strings.ToLower(tc.query), strings.ToLower(strings.NewReplacer("é", "e").Replace(string(utf16.Decode(picked)))), "%q in %s", tc.query, tc.path)
	}
}

// An empty query lists the shallowest paths first, in byte order, up to
// the limit; the limit caps every search.
func TestEmptyQueryAndLimit(t *testing.T) {
	root := tree(t, map[string]string{"b.txt": "", "a/x.txt": "", "a/b/y.txt": "", "c/": ""})
	ix := newIndex(t, root, filesearch.Options{})
	res, err := ix.Search(context.Background(), "", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a/", "b.txt", "c/", "a/b/", "a/x.txt", "a/b/y.txt"}, paths(res.Matches))
	for _, m := range res.Matches {
		require.Zero(t, m.Score)
		require.NotNil(t, m.Positions)
		require.Empty(t, m.Positions)
	}
	res, err = ix.Search(context.Background(), "", 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a/", "b.txt"}, paths(res.Matches))
	res, err = ix.Search(context.Background(), "t", 1)
	require.NoError(t, err)
	require.Len(t, res.Matches, 1)
}

// Past MaxEntries the index keeps the shallower paths and says it is
// truncated.
func TestMaxEntries(t *testing.T) {
	files := map[string]string{"top.txt": ""}
	for i := range 30 {
		files["deep/d/"+string(rune('a'+i%26))+strings.Repeat("x", i)+".txt"] = ""
	}
	root := tree(t, files)
	ix := newIndex(t, root, filesearch.Options{MaxEntries: 10})
	res, err := ix.Search(context.Background(), "txt", filesearch.MaxLimit)
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.Equal(t, 10, ix.Len())
	require.Contains(t, paths(res.Matches), "top.txt", "the shallow path is kept")

	full := newIndex(t, root, filesearch.Options{})
	res, err = full.Search(context.Background(), "txt", filesearch.MaxLimit)
	require.NoError(t, err)
	require.False(t, res.Truncated)
	require.Len(t, res.Matches, 31)
}

// Names that are not valid UTF-8 or hold control or bidi characters are
// left out, with what is below them; the rest is found and encodes as
// JSON that decodes to the same paths.
func TestHostileNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("such names cannot be made on Windows")
	}
	root := tree(t, map[string]string{"ok/fine.txt": "", "quote\"back\\slash<tag>&.txt": "", "tab–dash ünï.txt": ""})
	for _, name := range []string{"new\nline.txt", "ctl\x01.txt", "bad\xff.txt", "esc\x1b[31m.txt", "rtl\u202etxt.exe", "del\x7f.txt", "c1\u0085.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), nil, 0o644), "%q", name)
	}
	bad := filepath.Join(root, "dir\xfe")
	require.NoError(t, os.MkdirAll(filepath.Join(bad, "inner"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "inner", "txtfile.txt"), nil, 0o644))

	ix := newIndex(t, root, filesearch.Options{})
	ms := search(t, ix, "txt")
	require.ElementsMatch(t, []string{"ok/fine.txt", "quote\"back\\slash<tag>&.txt", "tab–dash ünï.txt"}, paths(ms))
	b, err := json.Marshal(ms)
	require.NoError(t, err)
	var back []filesearch.Match
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, ms, back)

	// A hostile name reported by the watcher stays out too.
	require.NoError(t, os.WriteFile(filepath.Join(root, "late\nname.txt"), nil, 0o644))
	ix.Changed(filepath.Join(root, "late\nname.txt"))
	ix.Changed(filepath.Join(bad, "inner", "txtfile.txt"))
	require.Len(t, search(t, ix, "txt"), 3)
}

// Symbolic links are never followed out of the root: a link to a file or
// directory inside is listed (a directory is not entered), a link out of
// the root, a dangling link and a loop are left out.
func TestSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	outside := tree(t, map[string]string{"secret/passwd.txt": "", "out.txt": ""})
	root := tree(t, map[string]string{"real/inner.txt": "", "file.txt": ""})
	for link, target := range map[string]string{
		"to-file.txt":   "file.txt",
		"to-real":       "real",
		"to-outside":    filepath.Join(outside, "secret"),
		"to-out.txt":    filepath.Join(outside, "out.txt"),
		"rel-out.txt":   "../" + filepath.Base(outside) + "/out.txt",
		"dangling.txt":  "nothing-here.txt",
		"loop.txt":      "loop.txt",
		"real/up.txt":   "../file.txt",
		"real/back-out": "../../",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, link)), link)
	}
	ix := newIndex(t, root, filesearch.Options{})
	res, err := ix.Search(context.Background(), "", filesearch.MaxLimit)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"real/", "file.txt", "to-file.txt", "to-real/", "real/inner.txt", "real/up.txt"}, paths(res.Matches))
	require.Empty(t, search(t, ix, "passwd"))
	require.Empty(t, search(t, ix, "out.txt"))
}

// listen connects the index to a real watcher of root, as the backend
// does; heard gets every path the watcher reports, after the index heard it.
func listen(t *testing.T, root string, ix *filesearch.Index) <-chan string {
	t.Helper()
	w, err := conflict.NewWatcher(root, conflict.WatcherOptions{})
	require.NoError(t, err)
	heard := make(chan string, 1024)
	stop := w.Listen(func(ev conflict.Event) {
		if ev.Lost {
			ix.Lost()
			return
		}
		ix.Changed(ev.Path)
		select {
		case heard <- ev.Path:
		default:
		}
	})
	t.Cleanup(func() {
		stop()
		require.NoError(t, w.Close())
	})
	return heard
}

// waitFor waits until the watcher reported p (absolute).
func waitFor(t *testing.T, heard <-chan string, p string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-heard:
			if got == p {
				return
			}
		case <-timeout:
			t.Fatalf("the watcher never reported %s", p)
		}
	}
}

// The watcher keeps the index current: a file created, a directory made
// with files in it, a removal and a rename are seen by the next search,
// and a changed .gitignore applies.
func TestWatcherKeepsIndexCurrent(t *testing.T) {
	root := tree(t, map[string]string{"src/old.go": "", "keep/k.go": "", ".gitignore": "*.log\n"})
	ix := newIndex(t, root, filesearch.Options{})
	heard := listen(t, root, ix)
	require.Equal(t, []string{"src/old.go"}, paths(search(t, ix, "old.go")))

	abs := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	require.NoError(t, os.WriteFile(abs("src/fresh.go"), nil, 0o644))
	waitFor(t, heard, abs("src/fresh.go"))
	require.Equal(t, []string{"src/fresh.go"}, paths(search(t, ix, "fresh.go")))

	// A new directory: its files are read with it (fsnotify reports only
	// the directory when they came before its watch).
	require.NoError(t, os.MkdirAll(abs("pkg/deep"), 0o755))
	require.NoError(t, os.WriteFile(abs("pkg/deep/made.go"), nil, 0o644))
	waitFor(t, heard, abs("pkg"))
	require.Contains(t, paths(search(t, ix, "made.go")), "pkg/deep/made.go")

	require.NoError(t, os.Remove(abs("src/old.go")))
	waitFor(t, heard, abs("src/old.go"))
	require.Empty(t, search(t, ix, "old.go"))

	require.NoError(t, os.Rename(abs("keep"), abs("moved")))
	waitFor(t, heard, abs("moved"))
	got := paths(search(t, ix, "k.go"))
	require.Contains(t, got, "moved/k.go")
	require.NotContains(t, got, "keep/k.go")

	// Ignored files are not indexed, and a new ignore rule applies.
	require.NoError(t, os.WriteFile(abs("src/x.log"), nil, 0o644))
	waitFor(t, heard, abs("src/x.log"))
	require.Empty(t, search(t, ix, "x.log"))
	require.NoError(t, os.WriteFile(abs(".gitignore"), []byte("*.log\nsrc/fresh.go\n"), 0o644))
	waitFor(t, heard, abs(".gitignore"))
	require.Eventually(t, func() bool { return len(search(t, ix, "fresh.go")) == 0 }, 30*time.Second, 10*time.Millisecond,
		"the rebuild after the ignore file changed drops src/fresh.go")
	all, err := ix.Search(context.Background(), "", filesearch.MaxLimit)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{".gitignore", "src/", "moved/", "moved/k.go", "pkg/", "pkg/deep/", "pkg/deep/made.go"}, paths(all.Matches))
}

// A query that extends the previous one narrows its matches, but never
// past a change: what was created in between is found.
func TestNarrowingSeesChanges(t *testing.T) {
	root := tree(t, map[string]string{"alpha.go": "", "beta.go": ""})
	ix := newIndex(t, root, filesearch.Options{})
	heard := listen(t, root, ix)
	require.Empty(t, search(t, ix, "gam"))
	require.NoError(t, os.WriteFile(filepath.Join(root, "gamma.go"), nil, 0o644))
	waitFor(t, heard, filepath.Join(root, "gamma.go"))
	require.Equal(t, []string{"gamma.go"}, paths(search(t, ix, "gamm")))

	// Narrowing gives what a fresh index gives.
	for _, q := range []string{"a", "al", "alp", "ago", "b"} {
		fresh := newIndex(t, root, filesearch.Options{})
		require.Equal(t, search(t, fresh, q), search(t, ix, q), q)
	}
}

// An index whose notifications do not cover the tree is rebuilt in the
// background once it is older than RefreshAfter.
func TestRefreshWhenNotLive(t *testing.T) {
	root := tree(t, map[string]string{"one.txt": ""})
	ix := newIndex(t, root, filesearch.Options{RefreshAfter: time.Millisecond})
	require.Len(t, search(t, ix, "txt"), 1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "two.txt"), nil, 0o644))
	require.Eventually(t, func() bool { return len(search(t, ix, "txt")) == 2 }, 30*time.Second, 10*time.Millisecond)
}

// A search whose context ends while the first build runs fails with the
// context's cause; the build goes on for the next search.
func TestCancelledSearch(t *testing.T) {
	root := tree(t, map[string]string{"a.txt": ""})
	ix := newIndex(t, root, filesearch.Options{})
	cause := errors.New("superseded")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err := ix.Search(ctx, "a", 0)
	if err != nil { // the build may have won the race
		require.ErrorIs(t, err, cause)
	}
	require.Equal(t, []string{"a.txt"}, paths(search(t, ix, "a.txt")))
	_, err = ix.Search(ctx, "txt", 0) // built: the match itself stops
	require.ErrorIs(t, err, cause)

	require.NoError(t, ix.Close())
	_, err = ix.Search(context.Background(), "a", 0)
	require.ErrorIs(t, err, filesearch.ErrClosed)
}
