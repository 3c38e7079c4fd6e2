// Package confine is the one place where a tool's path becomes a file on
// disk. A Workspace is the session's workspace root plus the directories the
// user granted through request_directory. Resolve checks a path lexically and
// with symlinks resolved; Open hands back an *os.Root for the base that holds
// the path, so that the actual open, create or remove is done by os.Root,
// which refuses any escape (.., absolute links, links swapped after the check)
// at the moment of the system call. OpenRead opens a file for reading
// without ever blocking on a FIFO and refuses special files.
//
// Concurrency: a Workspace is safe for concurrent use; grants may be added
// while tools run.
package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/zqagent/sidecar/tools"
)

// Grant is a directory outside the workspace that the user allowed.
type Grant struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable"`
}

// Workspace confines paths to a root and its grants.
type Workspace struct {
	root string // absolute, symlinks resolved

	mu     sync.RWMutex
	grants []Grant // guarded by mu; paths absolute, symlinks resolved
}

// New returns a Workspace rooted at dir, which must exist.
func New(dir string) (*Workspace, error) {
	real, err := realDir(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &Workspace{root: real}, nil
}

func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}

// Root is the workspace's absolute path with symlinks resolved.
func (w *Workspace) Root() string { return w.root }

// GrantExact is Grant for a directory the user was shown as it is: dir
// must be absolute and resolve to itself (no symlink on the way), so the
// grant covers exactly what the card showed, even if a link was swapped in
// since.
func (w *Workspace) GrantExact(dir string, writable bool) error {
	real, err := realDir(dir)
	if err != nil {
		return fmt.Errorf("grant directory: %w", err)
	}
	if real != filepath.Clean(dir) {
		return fmt.Errorf("%w: grant directory: %s now resolves to %s", tools.ErrConflict, dir, real)
	}
	return w.Grant(real, writable)
}

// Grant adds a directory the session may read (and write, if writable).
func (w *Workspace) Grant(dir string, writable bool) error {
	real, err := realDir(dir)
	if err != nil {
		return fmt.Errorf("grant directory: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, g := range w.grants {
		if g.Path == real {
			w.grants[i].Writable = g.Writable || writable
			return nil
		}
	}
	w.grants = append(w.grants, Grant{Path: real, Writable: writable})
	return nil
}

// Grants returns the granted directories.
func (w *Workspace) Grants() []Grant {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return append([]Grant(nil), w.grants...)
}

// Within reports whether path p (absolute, clean) is dir or below it. A
// sibling with the same prefix ("/ws-evil" for "/ws") is not within.
func Within(dir, p string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// Abs makes p absolute against the workspace root and cleans it, without
// touching the disk.
func (w *Workspace) Abs(p string) string {
	if p == "" {
		p = "."
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.root, p)
	}
	return filepath.Clean(p)
}

// Resolve returns the real absolute path for p, or an error wrapping
// tools.ErrOutsideWorkspace when p, lexically or after resolving the
// symlinks of its existing part, lies outside the workspace and the grants
// (writable grants only when write is set). A path that does not exist yet is
// checked through its nearest existing parent, so a new file under a linked
// folder that points out is refused.
func (w *Workspace) Resolve(p string, write bool) (string, error) {
	abs := w.Abs(p)
	base, ok := w.baseFor(abs, write)
	if !ok {
		return "", fmt.Errorf("%w: %s", tools.ErrOutsideWorkspace, p)
	}
	real, err := resolveExisting(abs)
	if err != nil {
		return "", err
	}
	if !Within(base, real) {
		return "", fmt.Errorf("%w: %s resolves through a symlink to %s", tools.ErrOutsideWorkspace, p, real)
	}
	return real, nil
}

// baseFor returns the root or grant that lexically holds abs.
func (w *Workspace) baseFor(abs string, write bool) (string, bool) {
	if Within(w.root, abs) {
		return w.root, true
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, g := range w.grants {
		if Within(g.Path, abs) && (!write || g.Writable) {
			return g.Path, true
		}
	}
	return "", false
}

// resolveExisting resolves the symlinks of the longest existing prefix of abs
// and appends the rest.
func resolveExisting(abs string) (string, error) {
	rest := ""
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if rest == "" {
				return real, nil
			}
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			// A dangling link or a loop: refuse rather than guess.
			if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
				return "", fmt.Errorf("%w: %s is a dangling or looping symlink", tools.ErrOutsideWorkspace, cur)
			}
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%w: %s is a dangling symlink", tools.ErrOutsideWorkspace, cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Open checks p and returns an *os.Root for the base (workspace or grant)
// that holds it, with p relative to that base. The caller does the file
// operation through the root and closes it. Because os.Root refuses to leave
// its directory at the system call, a link swapped in after Resolve cannot
// make the operation escape.
func (w *Workspace) Open(p string, write bool) (*os.Root, string, error) {
	if _, err := w.Resolve(p, write); err != nil {
		return nil, "", err
	}
	abs := w.Abs(p)
	base, _ := w.baseFor(abs, write)
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s", tools.ErrOutsideWorkspace, p)
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return nil, "", err
	}
	return root, rel, nil
}

// Rel returns p relative to the workspace root when it is inside it, else the
// absolute path; for display.
func (w *Workspace) Rel(p string) string {
	abs := w.Abs(p)
	if rel, err := filepath.Rel(w.root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return abs
}
