// Package ignoretest holds the tree that pins the ignore rules: every
// walker (list_files, grep, the conflict watcher) is tested against it, so
// that they cannot come to disagree on what is ignored.
package ignoretest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Files of the tree: path -> content. Paths ending in "/" are empty
// directories. Every file holds the word "needle".
var files = map[string]string{
	".git/info/exclude":        "excluded.txt\n",
	".git/config":              "needle",
	".hg/store":                "needle",
	".svn/entries":             "needle",
	"node_modules/m/i.js":      "needle",
	".gitignore":               "# comment: needle\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.tmp\n\\#hash.txt\nspace.txt   \n[\n{a,b}*.txt\ndocs/drop.md\n",
	"a.log":                    "needle",
	"keep.log":                 "needle",
	"excluded.txt":             "needle",
	"top.txt":                  "needle",
	"#hash.txt":                "needle",
	"space.txt":                "needle",
	"a.txt":                    "needle",
	"{a,b}.txt":                "needle",
	"main.go":                  "needle",
	"build/out.go":             "needle",
	"build/x.log":              "needle", // *.log holds below an ignored directory named explicitly
	"build.go":                 "needle",
	"docs/x.tmp":               "needle",
	"docs/deep/y.tmp":          "needle",
	"docs/readme.md":           "needle",
	"docs/drop.md":             "needle",
	"src/top.txt":              "needle",
	"src/build":                "needle", // a file: "build/" is for directories only
	"src/.gitignore":           "gen/\n!a.log\nlocal.txt\n",
	"src/a.log":                "needle",
	"src/b.log":                "needle",
	"src/local.txt":            "needle",
	"src/gen/g.go":             "needle",
	"src/sub/local.txt":        "needle",
	"src/sub/.gitignore":       "!local.txt\n",
	"src/sub/keep.go":          "needle",
	"other/local.txt":          "needle",
	"other/.hg/x":              "needle",
	"other/node_modules/x":     "needle",
	"other/gen/g.go":           "needle",
	"other/.svn/entries":       "needle",
	"nested/.git/info/exclude": "kept.txt\n", // a nested repository's: not the walk root's, not read
	"nested/kept.txt":          "needle",
}

// Visible is what a walk of the tree shows: the files no rule excludes,
// slash paths relative to the root, sorted (ignore files included).
var Visible = []string{
	".gitignore", "a.txt", "build.go", "docs/deep/y.tmp", "docs/readme.md",
	"keep.log", "main.go", "nested/kept.txt", "other/gen/g.go", "other/local.txt",
	"src/.gitignore", "src/a.log", "src/build", "src/sub/.gitignore",
	"src/sub/keep.go", "src/sub/local.txt", "src/top.txt",
}

// Tree writes the tree into a new temporary directory and returns it.
func Tree(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Bomb is an ignore file of n short distinct patterns ("p0", "p1", …) of
// at most size bytes.
func Bomb(n, size int) []byte {
	var b []byte
	for i := 0; i < n && len(b) < size-16; i++ {
		b = fmt.Appendf(b, "p%x\n", i)
	}
	return b
}

// Bomb variants of BombTree.
const (
	NoBomb     = iota // no ignore file
	FitBomb           // a root .gitignore of 10,000 patterns (the most a walk loads)
	RootBomb          // a root .gitignore of 1 MiB
	NestedBomb        // a 1 MiB .gitignore at the root and in ten nested directories
	GlobBomb          // a root .gitignore of 1 MiB of wildcard patterns ("p1*x")
)

// BombTree writes a tree of 1,000 small files (100 directories of 10,
// every file holding "needle" once) and the ignore files of the variant
// into a new temporary directory, and returns it.
func BombTree(t testing.TB, variant int) string {
	t.Helper()
	root := t.TempDir()
	write := func(p string, data []byte) {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for d := range 100 {
		for f := range 10 {
			write(fmt.Sprintf("d%02d/f%d.go", d, f), []byte("package x\n\n// needle\nfunc f() {}\n"))
		}
	}
	switch variant {
	case FitBomb:
		write(".gitignore", Bomb(10_000, 1<<20))
	case RootBomb, NestedBomb:
		write(".gitignore", Bomb(1<<20, 1<<20))
	case GlobBomb:
		var b []byte
		for i := 0; len(b) < 1<<20-16; i++ {
			b = fmt.Appendf(b, "p%x*x\n", i)
		}
		write(".gitignore", b)
	}
	if variant == NestedBomb {
		dir := ""
		for i := range 10 {
			dir = path.Join(dir, fmt.Sprintf("n%d", i))
			write(dir+"/.gitignore", Bomb(1<<20, 1<<20))
			write(dir+"/f.go", []byte("// needle\n"))
		}
	}
	return root
}
