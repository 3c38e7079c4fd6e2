package backend

import (
	"context"

	"github.com/zqagent/sidecar/engine"
)

// What a front door or its tests may look at in the backend's state; none
// of it changes anything.

// Session returns the session's host, creating it (without an engine) on
// first use.
func (b *Backend) Session(ctx context.Context, id string) (*Session, error) { return b.host(ctx, id) }

// LoadedSession returns the session's host if it exists in this process.
func (b *Backend) LoadedSession(id string) *Session { return b.loadedHost(id) }

// LoadedEngine returns the session's engine if it is loaded.
func (b *Backend) LoadedEngine(id string) *engine.Engine { return b.loadedEngine(id) }

// TerminalStreams is the number of terminal.output streams of all clients.
func (b *Backend) TerminalStreams() int { return b.termSubs.size() }

// Watching reports whether the project has a file watcher (its sessions'
// ConflictGuards share one).
func (b *Backend) Watching(projectID string) bool {
	b.watchers.mu.Lock()
	defer b.watchers.mu.Unlock()
	return b.watchers.byProject[projectID] != nil
}
