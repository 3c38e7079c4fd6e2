// Package ignore decides which paths a directory walk skips: .git and
// node_modules always, hidden entries on request, and whatever the .gitignore
// files met on the way down exclude (github.com/sabhiram/go-gitignore).
//
// Concurrency: Rules values are immutable once built; a walk builds a child
// per directory and may share parents between goroutines.
package ignore

import (
	"path"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"
)

// FileName is the name of the ignore files a walk reads.
const FileName = ".gitignore"

// AlwaysSkipped reports whether a directory of this name is never walked.
func AlwaysSkipped(name string) bool {
	return name == ".git" || name == "node_modules"
}

// Hidden reports whether a base name is a dot file.
func Hidden(name string) bool {
	return strings.HasPrefix(name, ".") && name != "." && name != ".."
}

// Rules is a chain of .gitignore files, one per directory level that has one.
// The zero value (and nil) ignores nothing.
type Rules struct {
	parent *Rules
	dir    string // slash path of the .gitignore's directory, relative to the walk root; "" for the root
	gi     *gitignore.GitIgnore
}

// Child returns the rules in force inside dir (slash path relative to the
// walk root) given the content of dir's own .gitignore (nil or empty when
// there is none).
func (r *Rules) Child(dir string, gitignoreData []byte) *Rules {
	if len(strings.TrimSpace(string(gitignoreData))) == 0 {
		return r
	}
	dir = strings.Trim(path.Clean("/"+dir), "/")
	lines := strings.Split(string(gitignoreData), "\n")
	return &Rules{parent: r, dir: dir, gi: gitignore.CompileIgnoreLines(lines...)}
}

// Ignored reports whether rel (slash path relative to the walk root) is
// excluded by any .gitignore of the chain that lies above it.
func (r *Rules) Ignored(rel string, isDir bool) bool {
	rel = strings.Trim(path.Clean("/"+rel), "/")
	for l := r; l != nil; l = l.parent {
		sub := rel
		if l.dir != "" {
			if !strings.HasPrefix(rel, l.dir+"/") {
				continue
			}
			sub = rel[len(l.dir)+1:]
		}
		if isDir {
			sub += "/"
		}
		if l.gi.MatchesPath(sub) {
			return true
		}
	}
	return false
}
