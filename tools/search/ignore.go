package search

import (
	"os"
	"path/filepath"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/zqagent/sidecar/tools/confine"
)

// skipDirs are never searched.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true}

// ignoreLevel is the .gitignore of one directory, linked to its parent's.
// Levels are immutable once built, so workers may share them.
type ignoreLevel struct {
	parent *ignoreLevel
	base   string // the directory, slash-separated, relative to the workspace root ("" for the root)
	gi     *gitignore.GitIgnore
}

// ignored reports whether rel (relative to the workspace root,
// slash-separated) is ignored by this level or an ancestor. Directories are
// checked with isDir set, as "dir/" patterns need.
func (l *ignoreLevel) ignored(rel string, isDir bool) bool {
	for ; l != nil; l = l.parent {
		p := rel
		if l.base != "" {
			if !strings.HasPrefix(rel, l.base+"/") {
				continue
			}
			p = rel[len(l.base)+1:]
		}
		if isDir {
			p += "/"
		}
		if l.gi.MatchesPath(p) {
			return true
		}
	}
	return false
}

// push returns the level for the directory rel (under root) when it holds
// a readable .gitignore (or, for extra, any of the given files), else l. An
// ignore file that is not a regular file (a FIFO would block the search) or
// is over 1 MiB is skipped.
func (l *ignoreLevel) push(root *os.Root, rel string, files ...string) *ignoreLevel {
	var data []byte
	for _, f := range files {
		b, err := confine.ReadRegular(root, filepath.Join(filepath.FromSlash(rel), f), 1<<20)
		if err != nil {
			continue
		}
		data = append(append(data, b...), '\n')
	}
	return l.pushData(rel, data)
}

// pushData returns the level for the directory rel with the ignore rules
// in data, or l when there are none.
func (l *ignoreLevel) pushData(rel string, data []byte) *ignoreLevel {
	if len(data) == 0 {
		return l
	}
	return &ignoreLevel{parent: l, base: rel, gi: gitignore.CompileIgnoreLines(strings.Split(string(data), "\n")...)}
}

// ancestorsLevel loads the ignore files from the workspace root down to (not
// including) the directory rel where the walk starts: the walk itself loads
// the start directory's and those below.
func ancestorsLevel(root *os.Root, rel string) *ignoreLevel {
	l := (*ignoreLevel)(nil).push(root, "", filepath.Join(".git", "info", "exclude"))
	if rel == "" {
		return l
	}
	l = l.push(root, "", ".gitignore")
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		r := strings.Join(parts[:i], "/")
		l = l.push(root, r, ".gitignore")
	}
	return l
}
