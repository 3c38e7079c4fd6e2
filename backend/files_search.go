package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/zqagent/sidecar/filesearch"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/conflict"
)

// fileIndexes holds the file search index of each open project that was
// searched (files.search): made on the first search, kept current by the
// project's watcher (watch_project.go), closed with the project. mu is a
// leaf lock: the watcher is got before it is taken.
type fileIndexes struct {
	mu        sync.Mutex
	byProject map[string]*projectIndex // guarded by mu
	closed    bool                     // guarded by mu
}

// projectIndex is a project's index and its subscription to the
// project's watcher.
type projectIndex struct {
	ix   *filesearch.Index
	stop func() // ends the watcher's calls
}

func (pi *projectIndex) close() error {
	pi.stop()
	return pi.ix.Close()
}

// FilesSearch ranks the paths of an open project for a fuzzy query
// (files.search). The first search of a project builds its index and
// waits for it; a cancelled search (a newer one of the same connection,
// see ipc) fails with ctx's cause.
func (b *Backend) FilesSearch(ctx context.Context, p protocol.FilesSearchParams) (protocol.FilesSearchResult, error) {
	if p.Limit < 0 || p.Limit > filesearch.MaxLimit {
		return protocol.FilesSearchResult{}, protocol.InvalidField("limit", fmt.Sprintf("must be between 1 and %d (0 or absent: %d), got %d", filesearch.MaxLimit, filesearch.DefaultLimit, p.Limit))
	}
	if n := utf8.RuneCountInString(p.Query); n > filesearch.MaxQueryRunes {
		return protocol.FilesSearchResult{}, protocol.InvalidField("query", fmt.Sprintf("must be at most %d characters, got %d", filesearch.MaxQueryRunes, n))
	}
	pr, err := b.projectOf(ctx, p.ProjectID)
	if err != nil {
		return protocol.FilesSearchResult{}, err
	}
	ix, err := b.fileIndex(pr.ID, pr.Path)
	if err != nil {
		return protocol.FilesSearchResult{}, err
	}
	res, err := ix.Search(ctx, p.Query, p.Limit)
	switch {
	case errors.Is(err, filesearch.ErrClosed):
		return protocol.FilesSearchResult{}, fmt.Errorf("%w: project %s was closed", ErrNotFound, pr.ID)
	case err != nil && ctx.Err() != nil:
		return protocol.FilesSearchResult{}, err // the caller's cause (ipc: superseded)
	case err != nil:
		return protocol.FilesSearchResult{}, fmt.Errorf("files.search: %w", err)
	}
	out := protocol.FilesSearchResult{Results: make([]protocol.FileMatch, len(res.Matches)), Truncated: res.Truncated}
	for i, m := range res.Matches {
		out.Results[i] = protocol.FileMatch{Path: m.Path, Score: m.Score, Positions: m.Positions}
	}
	return out, nil
}

// fileIndex returns the project's index, making it on first use. Like
// terminal.create and mcp.*, a project that is not open is not found.
func (b *Backend) fileIndex(projectID, root string) (*filesearch.Index, error) {
	notOpen := fmt.Errorf("%w: project %s is not open in this sidecar; call project.open first", ErrNotFound, projectID)
	if !b.projectIsOpen(projectID) {
		return nil, notOpen
	}
	fi := &b.fileIdx
	fi.mu.Lock()
	pi := fi.byProject[projectID]
	fi.mu.Unlock()
	if pi != nil {
		return pi.ix, nil
	}

	// The watcher walks the tree to watch it: not under fi.mu.
	w := b.watcher(projectID, root)
	opts := filesearch.Options{}
	if w != nil {
		opts.Live = func() bool {
			st := w.Stats()
			return !st.LimitHit && st.Err == nil
		}
	}
	ix, err := filesearch.New(root, opts)
	if err != nil {
		return nil, fmt.Errorf("files.search: %w", err)
	}
	pi = &projectIndex{ix: ix, stop: func() {}}
	if w != nil {
		// Before the first build: what changes while it walks is read
		// again after it.
		pi.stop = w.Listen(func(ev conflict.Event) {
			if ev.Lost {
				ix.Lost()
				return
			}
			ix.Changed(ev.Path)
		})
	}

	fi.mu.Lock()
	switch old := fi.byProject[projectID]; {
	case fi.closed:
		fi.mu.Unlock()
		_ = pi.close()
		return nil, fmt.Errorf("files.search: %w", ErrClosed)
	case old != nil: // a concurrent first search won
		fi.mu.Unlock()
		_ = pi.close()
		return old.ix, nil
	}
	if fi.byProject == nil {
		fi.byProject = map[string]*projectIndex{}
	}
	fi.byProject[projectID] = pi
	fi.mu.Unlock()
	// A project.close that ran meanwhile did not see the index.
	if !b.projectIsOpen(projectID) {
		b.closeFileIndex(projectID)
		return nil, notOpen
	}
	return ix, nil
}

// closeFileIndex closes a project's index (project.close), before its
// watcher.
func (b *Backend) closeFileIndex(projectID string) {
	fi := &b.fileIdx
	fi.mu.Lock()
	pi := fi.byProject[projectID]
	delete(fi.byProject, projectID)
	fi.mu.Unlock()
	if pi != nil {
		if err := pi.close(); err != nil {
			b.log.Warn("close file index", "project", projectID, "err", err)
		}
	}
}

// closeAllFileIndexes closes every index (Close), before the watchers.
func (b *Backend) closeAllFileIndexes() error {
	fi := &b.fileIdx
	fi.mu.Lock()
	all := fi.byProject
	fi.byProject = nil
	fi.closed = true
	fi.mu.Unlock()
	var errs []error
	for _, pi := range all {
		errs = append(errs, pi.close())
	}
	return errors.Join(errs...)
}
