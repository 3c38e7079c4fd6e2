package filesearch

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/junegunn/fzf/src/util"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// dirBatch is how many entries of a directory are read at a time.
const dirBatch = 1024

// entry is one indexed path.
type entry struct {
	path  string     // slash path relative to the root; a directory's ends in "/"
	chars util.Chars // path, as the matcher reads it
	base  int32      // rune offset of the last element in path
	depth int32      // number of elements above the last one
}

func newEntry(p string) entry {
	name := strings.TrimSuffix(p, "/")
	i := strings.LastIndexByte(name, '/') + 1
	return entry{
		path:  p,
		chars: util.ToChars([]byte(p)),
		base:  int32(utf8.RuneCountInString(p[:i])),
		depth: int32(strings.Count(name, "/")),
	}
}

// baseName is the entry's last element, without a directory's "/".
func (e *entry) baseName() string {
	name := strings.TrimSuffix(e.path, "/")
	return name[strings.LastIndexByte(name, '/')+1:]
}

// baseChars is the entry's last element (with a directory's "/"), as the
// matcher reads it.
func (e *entry) baseChars() util.Chars {
	i := strings.LastIndexByte(strings.TrimSuffix(e.path, "/"), '/') + 1
	if e.chars.IsBytes() {
		return util.ToChars(e.chars.Bytes()[i:]) // ASCII: e.path's bytes
	}
	return util.ToChars([]byte(e.path[i:]))
}

// snapshot is the index's content: the paths of one walk and the changes
// read since. It is guarded by its Index's mu.
type snapshot struct {
	entries   []entry
	slot      map[string]int32         // path -> position in entries
	dirs      map[string]*ignore.Rules // walked directory ("" the root) -> rules in force inside it
	iw        *ignore.Walk             // the bounds of every ignore file the snapshot read
	max       int
	truncated bool // an entry was left out for max
	built     time.Time
}

var errFull = errors.New("index full")

// build walks the tree below fsroot into a new snapshot.
func build(ctx context.Context, fsroot *os.Root, max int) (*snapshot, error) {
	s := &snapshot{
		slot:  map[string]int32{},
		dirs:  map[string]*ignore.Rules{},
		iw:    ignore.NewWalk(),
		max:   max,
		built: time.Now(),
	}
	fi, err := fsroot.Stat(".")
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, errors.New("not a directory")
	}
	if err := s.addTree(ctx, fsroot, "", nil); err != nil {
		return nil, err
	}
	return s, nil
}

// addTree walks the directory rel ("" the root), breadth first, adding
// what the rules let through. parent holds the rules in force in rel's
// parent. It stops quietly when the snapshot is full.
func (s *snapshot) addTree(ctx context.Context, fsroot *os.Root, rel string, parent *ignore.Rules) error {
	type dir struct {
		rel    string
		parent *ignore.Rules
	}
	queue := []dir{{rel, parent}}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := queue[0]
		queue = queue[1:]
		rules := s.iw.Enter(d.parent, d.rel, ignore.RootOpener(fsroot, osName(d.rel)))
		s.dirs[d.rel] = rules
		subdirs, err := s.readDir(fsroot, d.rel, rules)
		for _, sub := range subdirs {
			queue = append(queue, dir{sub, rules})
		}
		if errors.Is(err, errFull) {
			return nil
		}
	}
	return nil
}

// readDir adds the entries of the directory rel and returns its
// subdirectories to walk. A directory that cannot be read (gone, swapped
// for something else, no permission) adds nothing.
func (s *snapshot) readDir(fsroot *os.Root, rel string, rules *ignore.Rules) ([]string, error) {
	// Non-blocking and confined: a directory swapped for a FIFO or a link
	// out of the root since its parent was read is refused here.
	f, fi, err := confine.OpenRead(fsroot, osName(rel))
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, nil
	}
	var subdirs []string
	for {
		des, err := f.ReadDir(dirBatch)
		for _, de := range des {
			name := de.Name()
			if !Eligible(name) {
				continue
			}
			child := join(rel, name)
			switch k := classify(fsroot, child, de.Type(), rules); k {
			case kindNone:
			case kindDir:
				if !s.add(child + "/") {
					return subdirs, errFull
				}
				subdirs = append(subdirs, child)
			case kindFile:
				if !s.add(child) {
					return subdirs, errFull
				}
			case kindLinkDir:
				if !s.add(child + "/") {
					return subdirs, errFull
				}
			}
		}
		if err != nil || len(des) == 0 {
			return subdirs, nil // io.EOF, or an error: what was read stays
		}
	}
}

type kind int

const (
	kindNone    kind = iota // left out
	kindFile                // a regular file, or a link to one inside the root
	kindDir                 // a directory: walked
	kindLinkDir             // a link to a directory inside the root: listed, never walked
)

// classify decides about the entry rel (its name already Eligible) of
// type typ (fs.FileMode type bits, as Lstat or ReadDir give them) in a
// directory whose rules are rules: what list_files lets through (dot
// entries included, as with its include_hidden), regular files and
// directories, and links that stay inside the root to one of those.
func classify(fsroot *os.Root, rel string, typ fs.FileMode, rules *ignore.Rules) kind {
	switch {
	case typ.IsDir():
		if rules.Skip(rel, true) {
			return kindNone
		}
		return kindDir
	case typ&fs.ModeSymlink != 0:
		// os.Root follows the link only inside the root: a link out of it,
		// or to nothing, fails here and is left out.
		fi, err := fsroot.Stat(osName(rel))
		if err != nil {
			return kindNone
		}
		switch {
		case fi.IsDir() && !rules.Skip(rel, true):
			return kindLinkDir
		case fi.Mode().IsRegular() && !rules.Skip(rel, false):
			return kindFile
		}
		return kindNone
	case typ.IsRegular():
		if rules.Skip(rel, false) {
			return kindNone
		}
		return kindFile
	}
	return kindNone // FIFOs, sockets, devices
}

// add appends the entry p unless the snapshot is full.
func (s *snapshot) add(p string) bool {
	if _, ok := s.slot[p]; ok {
		return true
	}
	if len(s.entries) >= s.max {
		s.truncated = true
		return false
	}
	s.slot[p] = int32(len(s.entries))
	s.entries = append(s.entries, newEntry(p))
	return true
}

// reconcile reads the path rel again after a change and makes the
// snapshot agree with what is there now.
func (s *snapshot) reconcile(fsroot *os.Root, rel string) {
	dir, name := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	rules, walked := s.dirs[dir]
	if !walked || !Eligible(name) {
		// Its directory is not in the index (ignored, hidden, left out),
		// so neither is rel.
		s.removeTree(rel)
		return
	}
	fi, err := fsroot.Lstat(osName(rel))
	if err != nil {
		s.removeTree(rel)
		return
	}
	k := classify(fsroot, rel, fi.Mode().Type(), rules)
	_, isFile := s.slot[rel]
	_, isDir := s.slot[rel+"/"]
	_, wasWalked := s.dirs[rel]
	switch {
	case k == kindFile && isFile, k == kindLinkDir && isDir && !wasWalked:
		return // a write, or an event for what is indexed already
	}
	// A directory is read again whole: what was moved in came with
	// everything below it, and no event was sent for that.
	s.removeTree(rel)
	switch k {
	case kindFile:
		s.add(rel)
	case kindLinkDir:
		s.add(rel + "/")
	case kindDir:
		if s.add(rel + "/") {
			_ = s.addTree(context.Background(), fsroot, rel, rules) // bounded by max
		}
	}
}

// removeTree removes rel, and everything below it if it was a walked
// directory.
func (s *snapshot) removeTree(rel string) {
	s.remove(rel)
	s.remove(rel + "/")
	if _, ok := s.dirs[rel]; !ok {
		return
	}
	prefix := rel + "/"
	for d := range s.dirs {
		if d == rel || strings.HasPrefix(d, prefix) {
			delete(s.dirs, d)
		}
	}
	kept := s.entries[:0]
	for _, e := range s.entries {
		if strings.HasPrefix(e.path, prefix) {
			delete(s.slot, e.path)
			continue
		}
		s.slot[e.path] = int32(len(kept))
		kept = append(kept, e)
	}
	clear(s.entries[len(kept):]) // let the strings go
	s.entries = kept
}

// remove drops the entry p, if held (the last entry takes its slot).
func (s *snapshot) remove(p string) {
	i, ok := s.slot[p]
	if !ok {
		return
	}
	delete(s.slot, p)
	last := int32(len(s.entries) - 1)
	if i != last {
		s.entries[i] = s.entries[last]
		s.slot[s.entries[i].path] = i
	}
	s.entries[last] = entry{}
	s.entries = s.entries[:last]
}

// Eligible reports whether a file name can be in the index: valid UTF-8,
// and no control or bidirectional formatting character.
func Eligible(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// osName is the os.Root name of the slash path rel ("" the root).
func osName(rel string) string { return filepath.FromSlash(cmp.Or(rel, ".")) }
