package ignore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/confine"
)

// Bounds of one walk, over all the ignore files it loads. Patterns that
// are not a literal name, a literal path or "*.ext" are matched one by one
// against every entry, so fewer of them are loaded.
const (
	MaxPatterns = 10_000
	MaxGlobs    = 1_000
	MaxBytes    = 1 << 20
)

// Opener opens the ignore file name (a slash path relative to the
// directory being loaded) for reading. It must not block and must refuse
// anything but a regular file; an error means there is no such file.
type Opener func(name string) (io.ReadCloser, error)

// RootOpener opens the ignore files of dir (an os.Root name) under root,
// with confine.OpenRead: confined, non-blocking, regular files only.
func RootOpener(root *os.Root, dir string) Opener {
	return func(name string) (io.ReadCloser, error) {
		f, fi, err := confine.OpenRead(root, filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			return nil, errNotRegular
		}
		return f, nil
	}
}

var errNotRegular = errors.New("not a regular file")

// Walk is the ignore state of one directory walk: what its ignore files
// cost so far, and which directories' files were not loaded whole.
type Walk struct {
	maxPatterns, maxGlobs, maxBytes int
	patterns, globs, bytes          int      // loaded so far
	cut                             []string // directories whose ignore files were not loaded whole, in walk order
}

// NewWalk returns the state of a new walk with the default bounds.
func NewWalk() *Walk {
	return &Walk{maxPatterns: MaxPatterns, maxGlobs: MaxGlobs, maxBytes: MaxBytes}
}

// Load reads the ignore files names (FileName when none is given) of the
// directory dir (slash path relative to the walk root, "" for the root)
// with open, and returns the rules in force inside dir: parent's and
// theirs. Files past the walk's bounds are loaded in part or not at all;
// the rules returned then report !Complete.
func (w *Walk) Load(parent *Rules, dir string, open Opener, names ...string) *Rules {
	if len(names) == 0 {
		names = []string{FileName}
	}
	dir = strings.Trim(path.Clean("/"+dir), "/")
	var s set
	cut := false
	for _, name := range names {
		if w.loadFile(&s, open, name) {
			cut = true
		}
	}
	if cut {
		w.cut = append(w.cut, dir)
	}
	if len(s.pats) == 0 && !cut {
		return parent
	}
	r := &Rules{parent: parent, dir: dir, partial: cut || !parent.Complete()}
	if len(s.pats) > 0 {
		r.set = &s
	}
	return r
}

// Enter returns the rules in force inside dir (slash path relative to the
// walk root, "" for the root), a directory the walk enters below parent:
// parent's and dir's .gitignore, and at the root also .git/info/exclude.
// open opens dir's ignore files. Every walker enters every directory
// through it, so that they read the same files.
func (w *Walk) Enter(parent *Rules, dir string, open Opener) *Rules {
	if strings.Trim(path.Clean("/"+dir), "/") == "" {
		return w.Load(parent, "", open, ExcludeFile, FileName)
	}
	return w.Load(parent, dir, open, FileName)
}

// Start returns the rules in force inside dir for a walk of the tree below
// it: Enter of the root and of each directory down to dir, dir included.
// open(d) opens the ignore files of the directory d. Naming a directory
// that the rules exclude walks it all the same; its entries are judged by
// the rules, like any other's.
func (w *Walk) Start(dir string, open func(dir string) Opener) *Rules {
	rules := w.Enter(nil, "", open(""))
	dir = strings.Trim(path.Clean("/"+dir), "/")
	for i := 0; dir != "" && i <= len(dir); i++ {
		if i == len(dir) || dir[i] == '/' {
			rules = w.Enter(rules, dir[:i], open(dir[:i]))
		}
	}
	return rules
}

// loadFile adds the patterns of one file to s within the walk's bounds; it
// reports whether the file was not loaded whole.
func (w *Walk) loadFile(s *set, open Opener, name string) (cut bool) {
	rc, err := open(name)
	if err != nil {
		return false
	}
	defer rc.Close()
	room := max(w.maxBytes-w.bytes, 0)
	data, err := io.ReadAll(io.LimitReader(rc, int64(room)+1))
	if err != nil {
		return true // unreadable: its rules are unknown
	}
	if len(data) > room {
		cut = true
		data = data[:room]
		data = data[:bytes.LastIndexByte(data, '\n')+1] // whole lines only
	}
	w.bytes += len(data)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		p, k, key, ok := parseLine(string(line))
		if !ok {
			continue
		}
		glob := k == kindGlobName || k == kindGlobPath
		if w.patterns >= w.maxPatterns || glob && w.globs >= w.maxGlobs {
			return true
		}
		w.patterns++
		if glob {
			w.globs++
		}
		s.add(p, k, key)
	}
	return cut
}

// Truncated reports the directories (slash paths relative to the walk
// root, "" for the root) whose ignore files were not loaded whole.
func (w *Walk) Truncated() []string { return w.cut }

// Note is the line a tool adds to its result when the walk's ignore rules
// were truncated, or "" when they were not; consequence says what the tool
// did about it.
func (w *Walk) Note(consequence string) string {
	if len(w.cut) == 0 {
		return ""
	}
	dirs := make([]string, 0, 3)
	for _, d := range w.cut[:min(len(w.cut), 3)] {
		if d == "" {
			d = "."
		}
		dirs = append(dirs, d)
	}
	more := ""
	if n := len(w.cut) - len(dirs); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("[ignore rules truncated: the ignore files of %s%s were not fully loaded (a walk loads at most %d patterns, %d of them wildcard patterns, and %d KiB of ignore files); %s]",
		strings.Join(dirs, ", "), more, w.maxPatterns, w.maxGlobs, w.maxBytes>>10, consequence)
}

// Rules is a chain of ignore files, one level per directory that has any.
// The zero value (and nil) ignores nothing.
type Rules struct {
	parent  *Rules
	dir     string // slash path of the level's directory, relative to the walk root; "" for the root
	set     *set   // nil when nothing of the level's files was loaded
	partial bool   // this level's files or an ancestor's were not loaded whole
}

// Complete reports whether every ignore file in force was loaded whole.
func (r *Rules) Complete() bool { return r == nil || !r.partial }

// Ignored reports whether rel (slash path relative to the walk root) is
// excluded by the rules: the deepest level with a matching pattern decides,
// and in it the last matching pattern. Walkers ask about each entry before
// descending, so an ignored directory's contents are never asked about.
func (r *Rules) Ignored(rel string, isDir bool) bool {
	if r == nil {
		return false
	}
	rel = strings.Trim(path.Clean("/"+rel), "/")
	name := path.Base(rel)
	for l := r; l != nil; l = l.parent {
		if l.set == nil {
			continue
		}
		sub := rel
		if l.dir != "" {
			if !strings.HasPrefix(rel, l.dir+"/") {
				continue
			}
			sub = rel[len(l.dir)+1:]
		}
		if i := l.set.match(sub, name, isDir); i >= 0 {
			return !l.set.pats[i].neg
		}
	}
	return false
}

// Skip reports whether a walk skips the entry rel (slash path relative to
// the walk root): a directory that is never walked (AlwaysSkipped) or what
// the rules exclude. Every walker asks it about every entry.
func (r *Rules) Skip(rel string, isDir bool) bool {
	return isDir && AlwaysSkipped(path.Base(rel)) || r.Ignored(rel, isDir)
}

// IgnoredPath reports whether rel or a directory above it is ignored: for
// a walk that starts below the root, after loading the levels above it.
func (r *Rules) IgnoredPath(rel string) bool {
	rel = strings.Trim(path.Clean("/"+rel), "/")
	for i := 0; rel != ""; {
		j := strings.IndexByte(rel[i:], '/')
		if j < 0 {
			return r.Ignored(rel, true)
		}
		if r.Ignored(rel[:i+j], true) {
			return true
		}
		i += j + 1
	}
	return false
}
