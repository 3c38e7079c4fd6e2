package conflict

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// Defaults of WatcherOptions.
const (
	DefaultMaxWatches = 4096
	DefaultMaxTracked = 65536
)

// WatcherOptions tunes a Watcher. Zero values take the defaults.
type WatcherOptions struct {
	// MaxWatches bounds the number of watched directories. Directories past
	// the limit are not watched; files in them are checked by hash.
	MaxWatches int
	// MaxTracked bounds the number of paths whose change counters are kept.
	// When it is exceeded the counters are dropped and every Guard falls
	// back to hashing the files it recorded before.
	MaxTracked int
}

// Change is what the Watcher saw happen to one path.
type Change struct {
	Count uint64    `json:"count"` // events seen (write, create, remove, rename)
	Time  time.Time `json:"time"`  // time of the last one
}

// Stats describes the Watcher's health.
type Stats struct {
	Watches  int   `json:"watches"`  // watched directories
	LimitHit bool  `json:"limitHit"` // some directories were left unwatched
	Err      error `json:"-"`        // set when the watcher failed; nothing is covered then
}

// Watcher follows a workspace tree with fsnotify.
type Watcher struct {
	root       string   // absolute, symlinks resolved
	fsroot     *os.Root // root: the ignore files are read through it
	fsw        *fsnotify.Watcher
	maxWatches int
	maxTracked int
	wg         sync.WaitGroup

	mu       sync.Mutex
	watched  map[string]*ignore.Rules // guarded by mu; watched dir -> rules in force inside it
	ignores  *ignore.Walk             // guarded by mu; the watcher's lifetime is one walk: its ignore files are bounded together
	changes  map[string]Change        // guarded by mu; path -> changes seen
	epoch    uint64                   // guarded by mu; bumped when changes were lost
	limitHit bool                     // guarded by mu
	failed   error                    // guarded by mu
	closed   bool                     // guarded by mu
	nextID   int                      // guarded by mu
	listens  map[int]func(Event)      // guarded by mu; Listen's callbacks
}

// Event is what a listener (Listen) hears: a path the watcher saw created,
// written, removed or renamed, or that events were lost.
type Event struct {
	// Path is absolute (below Root); empty when Lost.
	Path string
	// Lost: the watcher lost events (the kernel's queue overflowed) or
	// failed; a listener that mirrors the tree must read it again.
	Lost bool
}

// Listen calls fn with every change the watcher sees from now on, in the
// order seen, on the watcher's goroutine: fn must not block and must not
// call the Watcher. A directory created in a watched one is watched before
// fn hears of it, so whatever fn's owner reads in it later is covered.
// The returned func stops the calls; it waits for none in progress.
func (w *Watcher) Listen(fn func(Event)) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.listens == nil {
		w.listens = map[int]func(Event){}
	}
	id := w.nextID
	w.nextID++
	w.listens[id] = fn
	return func() {
		w.mu.Lock()
		delete(w.listens, id)
		w.mu.Unlock()
	}
}

// tell calls the listeners with ev (not under mu: they may take their own
// locks).
func (w *Watcher) tell(ev Event) {
	w.mu.Lock()
	fns := make([]func(Event), 0, len(w.listens))
	for _, fn := range w.listens {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn(ev)
	}
}

// NewWatcher starts watching root and every directory below it that the
// ignore rules (package ignore) do not skip, up to opts.MaxWatches
// directories.
func NewWatcher(root string, opts WatcherOptions) (*Watcher, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	if opts.MaxWatches <= 0 {
		opts.MaxWatches = DefaultMaxWatches
	}
	if opts.MaxTracked <= 0 {
		opts.MaxTracked = DefaultMaxTracked
	}
	fsroot, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		fsroot.Close()
		return nil, fmt.Errorf("watch %s: %w", root, err)
	}
	w := &Watcher{
		root:       real,
		fsroot:     fsroot,
		ignores:    ignore.NewWalk(),
		fsw:        fsw,
		maxWatches: opts.MaxWatches,
		maxTracked: opts.MaxTracked,
		watched:    map[string]*ignore.Rules{},
		changes:    map[string]Change{},
	}
	w.mu.Lock()
	w.addTreeLocked(real, nil)
	w.mu.Unlock()
	w.wg.Go(w.loop)
	return w, nil
}

// Root is the watched directory (absolute, symlinks resolved).
func (w *Watcher) Root() string { return w.root }

// Close stops watching and waits for the event goroutine.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	err := w.fsw.Close()
	w.wg.Wait()
	w.fsroot.Close()
	return err
}

// Stats reports how many directories are watched and whether the watcher
// is degraded.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{Watches: len(w.watched), LimitHit: w.limitHit, Err: w.failed}
}

// Changes returns what the watcher saw happen to path (absolute).
func (w *Watcher) Changes(path string) Change {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes[filepath.Clean(path)]
}

// Covered reports whether changes to path would be seen: the watcher is
// healthy and path's directory is watched.
func (w *Watcher) Covered(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _, ok := w.stateLocked(filepath.Clean(path))
	return ok
}

// state returns the epoch and change counter of path, and whether the
// watcher covers it.
func (w *Watcher) state(path string) (epoch, count uint64, covered bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stateLocked(path)
}

func (w *Watcher) stateLocked(path string) (epoch, count uint64, covered bool) {
	if w.failed != nil || w.closed {
		return w.epoch, 0, false
	}
	_, ok := w.watched[filepath.Dir(path)]
	return w.epoch, w.changes[path].Count, ok
}

// addTreeLocked watches dir and its subdirectories. parent holds the rules
// in force in dir's parent (nil for the root).
func (w *Watcher) addTreeLocked(dir string, parent *ignore.Rules) {
	if w.closed || w.failed != nil {
		return
	}
	if _, ok := w.watched[dir]; ok {
		return
	}
	if len(w.watched) >= w.maxWatches {
		w.limitHit = true
		return
	}
	if err := w.fsw.Add(dir); err != nil {
		// ENOSPC (the system's inotify limit) and friends: treat like our
		// own limit; files here are checked by hash.
		w.limitHit = true
		return
	}
	rel := w.rel(dir)
	// Read through the root, never blocking (a FIFO named .gitignore is
	// skipped), within the watcher's ignore bounds. Rules cut by the bounds
	// only mean more directories watched, which is the safe side.
	rules := w.ignores.Enter(parent, rel, ignore.RootOpener(w.fsroot, filepath.FromSlash(cmp.Or(rel, "."))))
	w.watched[dir] = rules
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		child := filepath.Join(dir, e.Name())
		if !e.IsDir() || rules.Skip(w.rel(child), true) {
			continue // e.IsDir is false for symlinks: links are never followed
		}
		w.addTreeLocked(child, rules)
	}
}

func (w *Watcher) rel(p string) string {
	r, err := filepath.Rel(w.root, p)
	if err != nil || r == "." {
		return ""
	}
	return filepath.ToSlash(r)
}

func (w *Watcher) loop() {
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.handle(ev) {
				w.tell(Event{Path: filepath.Clean(ev.Name)})
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.handleError(err)
			w.tell(Event{Lost: true})
		}
	}
}

// handle records ev; it reports whether the listeners hear of it.
func (w *Watcher) handle(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false // metadata only; content is unchanged
	}
	name := filepath.Clean(ev.Name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.changes) >= w.maxTracked {
		if _, ok := w.changes[name]; !ok {
			w.changes = map[string]Change{}
			w.epoch++
		}
	}
	c := w.changes[name]
	c.Count++
	c.Time = time.Now()
	w.changes[name] = c

	switch {
	case ev.Has(fsnotify.Create):
		fi, err := os.Lstat(name)
		if err != nil || !fi.IsDir() {
			return true
		}
		parent, ok := w.watched[filepath.Dir(name)]
		if !ok || parent.Skip(w.rel(name), true) {
			return true
		}
		// Files created in the new directory before its watch was added are
		// missed by fsnotify; a Guard has no record of them anyway.
		w.addTreeLocked(name, parent)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		// The kernel drops the watch of a removed directory; forget it and
		// everything below so that files there fall back to hashing.
		if _, ok := w.watched[name]; ok {
			for d := range w.watched {
				if d == name || within(name, d) {
					delete(w.watched, d)
					_ = w.fsw.Remove(d) // already gone for a removed dir
				}
			}
		}
	}
	return true
}

func (w *Watcher) handleError(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// Events were lost: nothing recorded so far can be trusted.
		w.changes = map[string]Change{}
		w.epoch++
		return
	}
	w.failed = fmt.Errorf("watch %s: %w", w.root, err)
	w.epoch++
}

func within(dir, p string) bool {
	return len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == filepath.Separator
}
