package backend

import (
	"errors"
	"sync"

	"github.com/zqagent/sidecar/tools/conflict"
)

// projectWatchers holds one file watcher per project, shared by the
// ConflictGuards of all its sessions: a write to a file another session or
// the user's editor changed since this session read it is refused. A
// watcher is made when the project's first engine is built (walking a large
// tree stays off project.open), and closed with the project. mu is a leaf
// lock; NewWatcher runs under it so two engines never build two watchers.
type projectWatchers struct {
	mu        sync.Mutex
	byProject map[string]*conflict.Watcher // guarded by mu
	closed    bool                         // guarded by mu
}

// watcher returns the project's watcher, making it on first use. It returns
// nil when the watcher cannot be made (the guards then compare hashes).
func (b *Backend) watcher(projectID, root string) *conflict.Watcher {
	pw := &b.watchers
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.closed {
		return nil
	}
	if w, ok := pw.byProject[projectID]; ok {
		return w
	}
	w, err := conflict.NewWatcher(root, conflict.WatcherOptions{})
	if err != nil {
		b.log.Warn("file watcher unavailable; conflict checks fall back to hashes", "project", projectID, "err", err)
		return nil
	}
	if pw.byProject == nil {
		pw.byProject = map[string]*conflict.Watcher{}
	}
	pw.byProject[projectID] = w
	return w
}

// closeWatcher closes a project's watcher (project.close).
func (b *Backend) closeWatcher(projectID string) error {
	pw := &b.watchers
	pw.mu.Lock()
	w := pw.byProject[projectID]
	delete(pw.byProject, projectID)
	pw.mu.Unlock()
	if w == nil {
		return nil
	}
	return w.Close()
}

// closeAllWatchers closes every watcher (Server.Close).
func (b *Backend) closeAllWatchers() error {
	pw := &b.watchers
	pw.mu.Lock()
	ws := pw.byProject
	pw.byProject = nil
	pw.closed = true
	pw.mu.Unlock()
	var errs []error
	for _, w := range ws {
		errs = append(errs, w.Close())
	}
	return errors.Join(errs...)
}
