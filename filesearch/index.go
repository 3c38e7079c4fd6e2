package filesearch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// Bounds and defaults.
const (
	// DefaultMaxEntries bounds the paths an index holds (about 190 bytes
	// each: 40 MB at the bound).
	DefaultMaxEntries = 200_000
	// DefaultRefreshAfter is Options.RefreshAfter's default.
	DefaultRefreshAfter = 30 * time.Second
	// MaxPending is the number of changed paths kept between two searches;
	// past it the index is rebuilt instead.
	MaxPending = 10_000
)

// ErrClosed is returned by Search after Close.
var ErrClosed = errors.New("file index closed")

// Options tune an Index. Zero values take the defaults.
type Options struct {
	// MaxEntries bounds the number of paths held.
	MaxEntries int
	// Live reports whether Changed and Lost hear of every change below the
	// root. Nil, or false when asked: the index is rebuilt (in the
	// background) when a search finds it older than RefreshAfter. It is
	// called with the index's lock held: it must not call the Index.
	Live func() bool
	// RefreshAfter is the age past which an index that is not Live is
	// rebuilt.
	RefreshAfter time.Duration
}

// Index is the searchable list of a workspace's paths: see the package doc.
type Index struct {
	root   string   // absolute
	fsroot *os.Root // root: every read goes through it
	opts   Options
	ctx    context.Context // the index's lifetime; Close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the build goroutine

	// mu guards the fields below; a search holds it while it matches.
	// Taken before pmu.
	mu       sync.Mutex
	snap     *snapshot     // nil until the first build ended
	building chan struct{} // non-nil while a build runs; closed when it ends
	buildErr error         // the last build's error
	version  uint64        // bumped at every change of snap's entries
	last     lastMatch     // the last complete search's matches
	closed   bool

	// pmu guards pending and stale; a leaf lock (the watcher's goroutine
	// takes it through Changed and Lost).
	pmu     sync.Mutex
	pending map[string]struct{} // slash paths changed since the last drain
	stale   bool                // events were lost or ignore rules changed: rebuild
}

// New returns an index of root (an existing directory). The first Search
// builds it.
func New(root string, opts Options) (*Index, error) {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.RefreshAfter <= 0 {
		opts.RefreshAfter = DefaultRefreshAfter
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("file index %s: %w", root, err)
	}
	fsroot, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("file index %s: %w", root, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Index{root: abs, fsroot: fsroot, opts: opts, ctx: ctx, cancel: cancel}, nil
}

// Close stops a build in progress, waits for it and releases the index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil
	}
	ix.closed = true
	ix.snap = nil
	ix.last = lastMatch{}
	ix.mu.Unlock()
	ix.cancel()
	ix.wg.Wait()
	return ix.fsroot.Close()
}

// Changed tells the index that the path p (absolute, as the watcher names
// it) was created, written, removed or renamed. It never blocks on a
// search.
func (ix *Index) Changed(p string) {
	rel, err := filepath.Rel(ix.root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return // not below the root
	}
	rel = filepath.ToSlash(rel)
	ix.pmu.Lock()
	defer ix.pmu.Unlock()
	switch {
	case ix.stale:
	case rel == "." || path.Base(rel) == ignore.FileName:
		// The root itself, or an ignore file: what is ignored may have
		// changed anywhere below.
		ix.stale, ix.pending = true, nil
	case len(ix.pending) >= MaxPending:
		ix.stale, ix.pending = true, nil
	default:
		if ix.pending == nil {
			ix.pending = map[string]struct{}{}
		}
		ix.pending[rel] = struct{}{}
	}
}

// Lost tells the index that changes were lost: it is rebuilt.
func (ix *Index) Lost() {
	ix.pmu.Lock()
	ix.stale, ix.pending = true, nil
	ix.pmu.Unlock()
}

// Len is the number of paths held (0 before the first build).
func (ix *Index) Len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.snap == nil {
		return 0
	}
	return len(ix.snap.entries)
}

// ready waits until the index has a snapshot, brings it up to date and
// returns with ix.mu held. It starts the builds that are due.
func (ix *Index) ready(ctx context.Context) (*snapshot, error) {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil, ErrClosed
	}
	if ix.building == nil && ix.dueLocked() {
		ix.startBuildLocked()
	}
	if ix.snap == nil {
		ch := ix.building
		ix.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		ix.mu.Lock()
		switch {
		case ix.closed:
			ix.mu.Unlock()
			return nil, ErrClosed
		case ix.snap == nil:
			err := ix.buildErr
			ix.mu.Unlock()
			return nil, err
		}
	}
	if ix.building == nil {
		// During a rebuild the changes wait for the new snapshot: applied
		// to the old one they would be lost with it.
		ix.drainLocked()
	}
	return ix.snap, nil
}

// dueLocked reports whether a build should start: there is no snapshot,
// events were lost, or the index cannot be kept current and is old.
func (ix *Index) dueLocked() bool {
	if ix.snap == nil || ix.stalePending() {
		return true
	}
	live := ix.opts.Live != nil && ix.opts.Live()
	return !live && time.Since(ix.snap.built) > ix.opts.RefreshAfter
}

func (ix *Index) stalePending() bool {
	ix.pmu.Lock()
	defer ix.pmu.Unlock()
	return ix.stale
}

// startBuildLocked walks the tree in the index's goroutine. The changes
// reported from now on are applied to the new snapshot once it is in.
func (ix *Index) startBuildLocked() {
	ix.pmu.Lock()
	ix.stale, ix.pending = false, nil
	ix.pmu.Unlock()
	ix.buildErr = nil
	done := make(chan struct{})
	ix.building = done
	ix.wg.Go(func() {
		s, err := build(ix.ctx, ix.fsroot, ix.opts.MaxEntries)
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if err != nil {
			ix.buildErr = fmt.Errorf("file index %s: %w", ix.root, err)
		} else if !ix.closed {
			ix.snap = s
			ix.version++
		}
		ix.building = nil
		close(done)
	})
}

// drainLocked reads the changed paths again.
func (ix *Index) drainLocked() {
	ix.pmu.Lock()
	p := ix.pending
	ix.pending = nil
	ix.pmu.Unlock()
	if len(p) == 0 {
		return
	}
	// Parents before children: a new directory's walk already covers what
	// was created in it.
	for _, rel := range slices.Sorted(maps.Keys(p)) {
		ix.snap.reconcile(ix.fsroot, rel)
	}
	ix.version++
}
