package conflict

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

// Guard remembers what one session last read or wrote, per file.
type Guard struct {
	w *Watcher // may be nil: hash checks only

	mu    sync.Mutex
	files map[string]record // guarded by mu; keyed by clean absolute path
}

type record struct {
	sum   [sha256.Size]byte
	size  int64
	mtime time.Time
	epoch uint64 // watcher epoch when recorded
	count uint64 // watcher change counter when recorded
}

// NewGuard returns a Guard for one session. w may be nil; every check then
// hashes the file.
func NewGuard(w *Watcher) *Guard {
	return &Guard{w: w, files: map[string]record{}}
}

// RecordRead notes that the session saw content at absPath with the given
// modification time.
func (g *Guard) RecordRead(absPath string, content []byte, mtime time.Time) {
	g.RecordSum(absPath, sha256.Sum256(content), int64(len(content)), mtime)
}

// RecordSum is RecordRead for callers that hashed the content themselves
// (streaming reads of large files).
func (g *Guard) RecordSum(absPath string, sum [sha256.Size]byte, size int64, mtime time.Time) {
	if g == nil {
		return
	}
	p := filepath.Clean(absPath)
	rec := record{sum: sum, size: size, mtime: mtime}
	if g.w != nil {
		rec.epoch, rec.count, _ = g.w.state(p)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.files[p] = rec
}

// RecordWrite notes that the session itself wrote content to absPath, so
// that its next write there is not a conflict.
func (g *Guard) RecordWrite(absPath string, content []byte) {
	if g == nil {
		return
	}
	var mtime time.Time
	if fi, err := os.Stat(absPath); err == nil {
		mtime = fi.ModTime()
	}
	g.RecordRead(absPath, content, mtime)
}

// Forget drops what the session knew about absPath (it deleted or moved
// the file).
func (g *Guard) Forget(absPath string) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.files, filepath.Clean(absPath))
}

// Known reports whether the session has read or written absPath.
func (g *Guard) Known(absPath string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.files[filepath.Clean(absPath)]
	return ok
}

// CheckWrite returns nil when the session may write absPath: it never read
// it, or the file still holds what the session last read or wrote. Otherwise
// the error wraps tools.ErrConflict and tells the model to read again.
func (g *Guard) CheckWrite(absPath string) error {
	return g.CheckWriteContext(context.Background(), absPath)
}

// CheckWriteContext is CheckWrite whose hashing of the file stops with
// ctx's error once ctx is done.
func (g *Guard) CheckWriteContext(ctx context.Context, absPath string) error {
	if g == nil {
		return nil
	}
	p := filepath.Clean(absPath)
	g.mu.Lock()
	defer g.mu.Unlock()
	rec, ok := g.files[p]
	if !ok {
		return nil
	}
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s was deleted after you read it; check with list_files or read_file before writing it again", tools.ErrConflict, p)
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", p, err)
	}
	var (
		epoch, count uint64
		covered      bool
	)
	if g.w != nil {
		epoch, count, covered = g.w.state(p)
		if covered && epoch == rec.epoch && count == rec.count &&
			fi.Size() == rec.size && fi.ModTime().Equal(rec.mtime) {
			return nil // the watcher saw nothing and the file looks the same
		}
	}
	sum, size, err := hashFile(ctx, p)
	if err != nil {
		return fmt.Errorf("check %s: %w", p, err)
	}
	if size == rec.size && bytes.Equal(sum[:], rec.sum[:]) {
		// Same content (a touch, or this session's own write whose event
		// came after RecordWrite): refresh so the next check is cheap.
		rec.mtime, rec.epoch, rec.count = fi.ModTime(), epoch, count
		g.files[p] = rec
		return nil
	}
	how := "changed on disk"
	if covered && count != rec.count {
		if c := g.w.Changes(p); !c.Time.IsZero() {
			how = fmt.Sprintf("changed on disk at %s (another session or an editor)", c.Time.Format(time.TimeOnly))
		}
	}
	return fmt.Errorf("%w: %s %s after you last read it; call read_file again and redo your edit on the current content", tools.ErrConflict, p, how)
}

func hashFile(ctx context.Context, p string) ([sha256.Size]byte, int64, error) {
	var sum [sha256.Size]byte
	f, _, err := confine.OpenReadPath(p) // a FIFO swapped in never blocks the check
	if err != nil {
		return sum, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, tools.ContextReader(ctx, f))
	if err != nil {
		return sum, 0, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, n, nil
}
