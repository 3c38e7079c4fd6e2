// Package ignoretest holds the tree that pins the ignore rules: every
// walker (list_files, grep, the conflict watcher) is tested against it, so
// that they cannot come to disagree on what is ignored.
package ignoretest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files of the tree: path -> content. Paths ending in "/" are empty
// directories. Every file holds the word "needle".
var files = map[string]string{
	".git/info/exclude":    "excluded.txt\n",
	".git/config":          "needle",
	".hg/store":            "needle",
	".svn/entries":         "needle",
	"node_modules/m/i.js":  "needle",
	".gitignore":           "# comment: needle\n*.log\n!keep.log\nbuild/\n/top.txt\ndocs/*.tmp\n\\#hash.txt\nspace.txt   \n[\n{a,b}*.txt\ndocs/drop.md\n",
	"a.log":                "needle",
	"keep.log":             "needle",
	"excluded.txt":         "needle",
	"top.txt":              "needle",
	"#hash.txt":            "needle",
	"space.txt":            "needle",
	"a.txt":                "needle",
	"{a,b}.txt":            "needle",
	"main.go":              "needle",
	"build/out.go":         "needle",
	"build.go":             "needle",
	"docs/x.tmp":           "needle",
	"docs/deep/y.tmp":      "needle",
	"docs/readme.md":       "needle",
	"docs/drop.md":         "needle",
	"src/top.txt":          "needle",
	"src/build":            "needle", // a file: "build/" is for directories only
	"src/.gitignore":       "gen/\n!a.log\nlocal.txt\n",
	"src/a.log":            "needle",
	"src/b.log":            "needle",
	"src/local.txt":        "needle",
	"src/gen/g.go":         "needle",
	"src/sub/local.txt":    "needle",
	"src/sub/.gitignore":   "!local.txt\n",
	"src/sub/keep.go":      "needle",
	"other/local.txt":      "needle",
	"other/.hg/x":          "needle",
	"other/node_modules/x": "needle",
	"other/gen/g.go":       "needle",
}

// Visible is what a walk of the tree shows: the files no rule excludes,
// slash paths relative to the root, sorted (ignore files included).
var Visible = []string{
	".gitignore", "a.txt", "build.go", "docs/deep/y.tmp", "docs/readme.md",
	"keep.log", "main.go", "other/gen/g.go", "other/local.txt",
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
