package gitenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Bounds of CheckLayout.
const (
	// maxLayoutEntries bounds the entries of the git directory (and of
	// what its links and alternates lead to) that one check visits; a
	// repository with more is refused rather than half checked.
	maxLayoutEntries = 1 << 20
	// maxAlternatesBytes bounds an alternates file.
	maxAlternatesBytes = 64 << 10
	// maxAlternateDepth is git's own bound on chained alternates.
	maxAlternateDepth = 5
	// readDirBatch is how many entries one ReadDir call returns.
	readDirBatch = 1024
)

// CheckLayout verifies that nothing git reads or writes through the git
// directory gitDir leaves project (an absolute path with symlinks
// resolved): gitDir and its commondir lie inside project; every entry of
// both, at any depth (objects, objects/pack, refs, refs/heads, HEAD,
// packed-refs, index, config, info/grafts, modules, the snapshots' private
// folder, ...; not hooks/, which an inert git never reads as its
// core.hooksPath is os.DevNull, and where users link shared hooks from
// elsewhere), is a file or directory or a link that resolves inside
// project, and what an inside link leads to is checked the same way; and
// every entry of objects/info/alternates and objects/info/http-alternates
// (relative, absolute, quoted, and the alternates of those, as git chains
// them) resolves inside project and is checked the same way. A link that
// resolves nowhere is accepted only when it names a path below its own
// folder (HEAD -> refs/heads/main on an unborn branch). What leaves is
// refused with an *OutsideError that names it.
//
// Git's environment variables that name other object stores
// (GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_COMMON_DIR,
// ...) are not this function's business: Env drops every inherited GIT_*
// variable.
//
// The check is a snapshot in time: a process that changes the git
// directory between the check and git's run (a race only something
// already running in the workspace can attempt) is not stopped by it. The
// callers check right before each run to keep that window small.
func CheckLayout(ctx context.Context, project, gitDir string) error {
	return checkLayout(ctx, []string{project}, gitDir)
}

// checkLayout is CheckLayout for the folders roots (the project first):
// everything the git directory leads to must lie in one of them.
func checkLayout(ctx context.Context, roots []string, gitDir string) error {
	l := &layout{ctx: ctx, project: roots[0], roots: roots, seen: map[string]bool{}, skip: map[string]bool{}}
	dir, err := l.root(gitDir, "git directory")
	if err != nil {
		return err
	}
	common, err := commonDir(roots, dir)
	if err != nil {
		return err
	}
	for _, d := range []string{dir, common} {
		l.skip[filepath.Join(d, "hooks")] = true
	}
	for _, d := range []string{dir, common} {
		if err := l.walk(d, l.rel(d)); err != nil {
			return err
		}
	}
	objects := filepath.Join(common, "objects")
	real, err := filepath.EvalSymlinks(objects)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // no object store yet
	case err != nil:
		return fmt.Errorf("%w: check %s: %v", ErrUnchecked, objects, err)
	}
	return l.alternates(real, l.rel(objects), 0)
}

// layout is the state of one CheckLayout.
type layout struct {
	ctx     context.Context
	project string          // named in errors
	roots   []string        // the project and the folders the user confirmed
	seen    map[string]bool // real directories walked
	skip    map[string]bool // entries never read by an inert git (hooks)
	n       int             // entries visited
}

// rel names p for messages: relative to the project when inside it.
func (l *layout) rel(p string) string {
	if r, err := filepath.Rel(l.project, p); err == nil && within(l.project, p) {
		return filepath.ToSlash(r)
	}
	return p
}

// root resolves a directory to check and refuses it outside the project.
func (l *layout) root(p, what string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %v", ErrNoRepo, what, p, err)
	}
	if !withinAny(l.roots, real) {
		return "", &OutsideError{Project: l.project, What: what, Target: real}
	}
	return real, nil
}

// commonDir is gitDir's commondir (gitDir itself when it names none),
// refused outside the project.
func commonDir(roots []string, gitDir string) (string, error) {
	b, err := readSmall(filepath.Join(gitDir, "commondir"), 4096)
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", fmt.Errorf("%w: commondir: %v", ErrUnchecked, err)
	}
	common := strings.TrimSpace(string(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	return insideAny(roots, "commondir", common)
}

// walk checks every entry below dir (real, inside the project), named rel
// in messages, following the links that stay inside.
func (l *layout) walk(dir, rel string) error {
	if l.seen[dir] {
		return nil
	}
	l.seen[dir] = true
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile (a gc): nothing to lead anywhere
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnchecked, rel, err)
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(readDirBatch)
		for _, e := range entries {
			if err := l.entry(filepath.Join(dir, e.Name()), rel+"/"+e.Name(), e.Type()); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(entries) == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnchecked, rel, err)
		}
	}
}

// entry checks one directory entry of type typ.
func (l *layout) entry(p, rel string, typ fs.FileMode) error {
	if l.skip[p] {
		return nil
	}
	l.n++
	if l.n > maxLayoutEntries {
		return fmt.Errorf("%w: more than %d entries in the git directory", ErrUnchecked, maxLayoutEntries)
	}
	if l.n%readDirBatch == 0 {
		if err := l.ctx.Err(); err != nil {
			return err
		}
	}
	switch {
	case typ&fs.ModeSymlink != 0:
		real, err := l.link(p, rel)
		if err != nil || real == "" {
			return err
		}
		if fi, err := os.Stat(real); err == nil && fi.IsDir() {
			return l.walk(real, rel)
		}
	case typ.IsDir():
		return l.walk(p, rel)
	}
	return nil
}

// link resolves the link p and refuses it when it leads outside the
// project. It returns "" for an accepted dangling link.
func (l *layout) link(p, rel string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		if !withinAny(l.roots, real) {
			return "", &OutsideError{Project: l.project, What: rel + " link", Target: real}
		}
		return real, nil
	}
	target, rerr := os.Readlink(p)
	if rerr != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrUnchecked, rel, rerr)
	}
	if !filepath.IsAbs(target) && filepath.IsLocal(target) && !slices.Contains(strings.Split(filepath.ToSlash(target), "/"), "..") {
		return "", nil // below its own folder, which is checked
	}
	return "", &OutsideError{Project: l.project, What: rel + " link", Target: target + " (which does not resolve)"}
}

// alternates checks the alternates files of the object store objects
// (real, inside the project, named rel) and the stores they name.
func (l *layout) alternates(objects, rel string, depth int) error {
	for _, name := range []string{"alternates", "http-alternates"} {
		file := filepath.Join(objects, "info", name)
		what := rel + "/info/" + name
		b, err := readSmall(file, maxAlternatesBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnchecked, what, err)
		}
		for line := range strings.Lines(string(b)) {
			entry := strings.TrimRight(line, "\r\n")
			if entry == "" || entry[0] == '#' {
				continue
			}
			if entry[0] == '"' {
				if entry, err = strconv.Unquote(entry); err != nil {
					return &OutsideError{Project: l.project, What: what, Target: strings.TrimRight(line, "\r\n") + " (an entry that cannot be read)"}
				}
			}
			if strings.Contains(entry, "://") {
				return &OutsideError{Project: l.project, What: what, Target: entry}
			}
			p := entry
			if !filepath.IsAbs(p) {
				p = filepath.Join(objects, p)
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				if withinAny(l.roots, filepath.Clean(p)) && errors.Is(err, fs.ErrNotExist) {
					continue // names nothing (yet); git skips it
				}
				return &OutsideError{Project: l.project, What: what, Target: p}
			}
			if !withinAny(l.roots, real) {
				return &OutsideError{Project: l.project, What: what, Target: real}
			}
			if depth+1 > maxAlternateDepth {
				return fmt.Errorf("%w: %s: alternates nested deeper than %d", ErrUnchecked, what, maxAlternateDepth)
			}
			if err := l.walk(real, l.rel(real)); err != nil {
				return err
			}
			if err := l.alternates(real, l.rel(real), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// readSmall reads at most max bytes of the regular file name; a longer
// file, or one that is not regular (a FIFO would block), is an error.
func readSmall(name string, max int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return b, nil
}
