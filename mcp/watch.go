package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/zqagent/sidecar/protocol"
)

// watchDebounce is how long the watcher waits for a burst of file events
// (editors write, rename and chmod in quick succession) to end.
const watchDebounce = 200 * time.Millisecond

// Apply replaces the manager's configs with cfgs (usually a reloaded file,
// through WithBuiltinConfigs): servers that are new or whose connection
// settings changed are (re)connected when enabled and trusted (a changed
// config needs a new approval: it is stopped), removed ones are
// disconnected. It returns the names added, removed and changed. Servers
// that did not change keep their connections.
func (m *Manager) Apply(ctx context.Context, cfgs []ServerConfig) (added, removed, changed []string) {
	added, removed, changed, finish := m.apply(cfgs)
	finish(ctx)
	return added, removed, changed
}

// apply replaces the configs; finish closes the stale connections and
// connects the new servers (it may take long: no lock is held for it).
func (m *Manager) apply(cfgs []ServerConfig) (added, removed, changed []string, finish func(context.Context)) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, nil, nil, func(context.Context) {}
	}
	next := map[string]ServerConfig{}
	var order []string
	for _, c := range cfgs {
		if _, dup := next[c.Name]; dup || c.Name == "" {
			continue
		}
		next[c.Name] = c.Clone()
		order = append(order, c.Name)
	}
	var stale []*conn
	for _, n := range m.order {
		if _, ok := next[n]; !ok {
			removed = append(removed, n)
			s := m.servers[n]
			stale = append(stale, m.resetLocked(s))
			s.state = StateClosed
			m.announceLocked(s)
			delete(m.servers, n)
		}
	}
	var connect []string
	for _, n := range order {
		c := next[n]
		s, ok := m.servers[n]
		switch {
		case !ok:
			added = append(added, n)
			s = &serverState{cfg: c, state: m.idleLocked(c)}
			m.servers[n] = s
			if s.state == StateUntrusted {
				m.announceLocked(s) // waits for trust
			}
		case !sameConnection(s.cfg, c):
			changed = append(changed, n)
			stale = append(stale, m.resetLocked(s))
			s.cfg = c
			s.state = m.idleLocked(c)
			m.announceLocked(s)
		default:
			s.cfg = c // same connection; keeps the new file's text for saving
			continue
		}
		if s.state == StateClosed {
			connect = append(connect, n)
		}
	}
	m.order = order
	m.syncLocked()
	m.mu.Unlock()
	m.flush()

	return added, removed, changed, func(ctx context.Context) {
		for _, c := range stale {
			if c != nil {
				_ = c.close()
			}
		}
		var wg sync.WaitGroup
		for _, n := range connect {
			wg.Go(func() { _ = m.Connect(ctx, n) })
		}
		wg.Wait()
	}
}

// Watch follows the config file at path (usually DefaultConfigPath): when
// it is created, written, renamed or removed, it reloads it after a short
// debounce, applies it (see Apply) and calls onChange with what changed and
// the file's warnings. onChange is not called when a reload changes nothing
// and has no warnings (the manager's own saves). The watch ends with ctx or
// CloseAll.
func (m *Manager) Watch(ctx context.Context, path string, onChange func(added, removed, changed []string, warnings []protocol.MCPWarning)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch MCP config: %w", err)
	}
	dir := filepath.Dir(path)
	parent := filepath.Dir(dir)
	// Watch the directory, not the file: atomic saves replace the file.
	// Until the directory exists, watch its parent for its creation.
	watchingDir := w.Add(dir) == nil
	if !watchingDir {
		if err := w.Add(parent); err != nil {
			_ = w.Close()
			return fmt.Errorf("watch MCP config: %w", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		_ = w.Close()
		return ErrClosed
	}
	wctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(m.dialer.base, cancel) // CloseAll ends the watch
	m.wg.Go(func() {                                 // under the lock: never after CloseAll's Wait
		defer stop()
		defer cancel()
		defer w.Close()
		m.watchLoop(wctx, w, path, dir, watchingDir, onChange)
	})
	return nil
}

func (m *Manager) watchLoop(ctx context.Context, w *fsnotify.Watcher, path, dir string, watchingDir bool, onChange func(added, removed, changed []string, warnings []protocol.MCPWarning)) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if !watchingDir && filepath.Clean(ev.Name) == dir && ev.Has(fsnotify.Create) {
				if w.Add(dir) == nil {
					watchingDir = true
					timer.Reset(watchDebounce) // the file may have come with it
				}
				continue
			}
			if filepath.Clean(ev.Name) == filepath.Clean(path) {
				timer.Reset(watchDebounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			m.log.Warn("mcp config watch", "path", path, "err", err)
		case <-timer.C:
			if !m.reload(ctx, path, onChange) {
				timer.Reset(watchDebounce) // an Edit is saving: read its file
			}
		}
	}
}

// reload reads the file and applies it. While an Edit runs it does
// nothing and reports false (the file may not hold the edit yet; its save
// changes the file again); otherwise it holds fileMu from the read to the
// apply, so that no edit and save lands in between.
func (m *Manager) reload(ctx context.Context, path string, onChange func(added, removed, changed []string, warnings []protocol.MCPWarning)) bool {
	if !m.fileMu.TryLock() {
		return false
	}
	cfgs, warns, ok := m.load(path)
	if !ok {
		m.fileMu.Unlock()
		if onChange != nil {
			onChange(nil, nil, nil, warns)
		}
		return true
	}
	added, removed, changed, finish := m.apply(WithBuiltinConfigs(cfgs))
	m.fileMu.Unlock()
	finish(ctx)
	if onChange != nil && len(added)+len(removed)+len(changed)+len(warns) > 0 {
		onChange(added, removed, changed, warns)
	}
	return true
}

// load reads the config file for a reload; ok is false when it is not to
// be applied (unreadable, often half-way through an edit: the servers stay
// as they are until it is fixed). A missing file has no servers.
func (m *Manager) load(path string) (cfgs []ServerConfig, warns []protocol.MCPWarning, ok bool) {
	cfgs, warns, err := LoadConfigFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		m.log.Warn("mcp config reload", "path", path, "err", err)
		return nil, warns, false
	}
	for _, w := range warns {
		m.log.Warn("mcp config", "warning", w.String())
		if w.Server == "" && w.Field == "" && len(cfgs) == 0 {
			return nil, warns, false
		}
	}
	return cfgs, warns, true
}
