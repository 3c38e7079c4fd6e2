package mcp

import (
	"context"
	"fmt"
	"slices"
)

// Configs returns copies of the configs, in order (builtin presets
// included; SaveConfigFile skips those added automatically).
func (m *Manager) Configs() []ServerConfig {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerConfig, 0, len(m.order))
	for _, n := range m.order {
		out = append(out, m.servers[n].cfg.Clone())
	}
	return out
}

// Edit runs f, edits of the configs (AddConfig, UpdateConfig,
// RemoveConfig) and the save of the watched file, as one step with respect
// to the watcher (Watch): a reload waits until f returns and then reads
// the file f saved, so that it never applies a file read before the save
// over the edit (dropping a server just added). It returns f's error. f
// must not call Edit.
func (m *Manager) Edit(f func() error) error {
	m.fileMu.Lock()
	defer m.fileMu.Unlock()
	return f()
}

// AddConfig adds a server the user configured (its type inferred when
// empty): its config is trusted, and the approval recorded. It does not
// connect it: call Connect.
func (m *Manager) AddConfig(ctx context.Context, c ServerConfig) error {
	c = c.Clone()
	if c.Type == "" {
		c.Type = inferType(c)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("add config: %w", err)
	}
	c.auto = false
	m.trustMu.Lock()
	defer m.trustMu.Unlock()
	m.mu.Lock()
	err := m.addableLocked(c.Name)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if err := m.approve(ctx, c); err != nil {
		return fmt.Errorf("add config: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.addableLocked(c.Name); err != nil {
		return err
	}
	if c.Type != TypeBuiltin && !m.opts.TrustAll {
		m.approved[c.Name] = c.Hash()
	}
	if s, ok := m.servers[c.Name]; ok {
		// The user configures a builtin preset: it replaces the automatic one.
		old := m.resetLocked(s)
		s.cfg, s.state = c, m.idleLocked(c)
		m.syncLocked()
		m.closeLater(old)
		return nil
	}
	m.order = append(m.order, c.Name)
	m.servers[c.Name] = &serverState{cfg: c, state: m.idleLocked(c)}
	return nil
}

// addableLocked reports why a server of that name cannot be added.
func (m *Manager) addableLocked(name string) error {
	if m.closed {
		return ErrClosed
	}
	if s, ok := m.servers[name]; ok && !s.cfg.auto {
		return fmt.Errorf("add config %q: %w", name, ErrDuplicateServer)
	}
	return nil
}

// UpdateConfig replaces the config of name (c.Name may rename it). Fields
// the file had but c leaves empty (Extra) are kept. A server whose
// connection settings changed is disconnected: call Connect to reconnect.
// The user edits their own server: a trusted server stays trusted (the new
// config's approval is recorded); an untrusted or changed one stays so
// until Trust. OnStatus is told the server's new state.
func (m *Manager) UpdateConfig(ctx context.Context, name string, c ServerConfig) error {
	c = c.Clone()
	if c.Name == "" {
		c.Name = name
	}
	if c.Type == "" {
		c.Type = inferType(c)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("update config: %w", err)
	}
	c.auto = false
	m.trustMu.Lock()
	defer m.trustMu.Unlock()
	m.mu.Lock()
	s, err := m.updatableLocked(name, c.Name)
	trusted := err == nil && m.trustLocked(s.cfg) == TrustTrusted
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if trusted {
		if err := m.approve(ctx, c); err != nil {
			return fmt.Errorf("update config: %w", err)
		}
		if c.Name != name {
			if err := m.trust.SetApproval(ctx, name, ""); err != nil {
				return fmt.Errorf("update config: %w", err)
			}
		}
	}

	m.mu.Lock()
	if s, err = m.updatableLocked(name, c.Name); err != nil {
		m.mu.Unlock()
		return err
	}
	if trusted && c.Type != TypeBuiltin && !m.opts.TrustAll {
		delete(m.approved, name)
		m.approved[c.Name] = c.Hash()
	}
	if c.raw == nil {
		// Built in code: compare with the old entry so that unchanged
		// fields keep their text (and ${VAR} references).
		c.orig, c.raw = s.cfg.orig, s.cfg.raw
	}
	if c.Extra == nil {
		c.Extra = s.cfg.Extra
	}
	changed := !sameConnection(s.cfg, c)
	if changed {
		m.closeLater(m.resetLocked(s))
	}
	s.cfg = c
	if changed || s.conn == nil {
		s.state = m.idleLocked(c)
	}
	if c.Name != name {
		delete(m.servers, name)
		m.servers[c.Name] = s
		m.order[slices.Index(m.order, name)] = c.Name
	}
	m.syncLocked()
	m.announceLocked(s)
	m.mu.Unlock()
	m.flush()
	return nil
}

// updatableLocked returns the server name, or why it cannot become newName.
func (m *Manager) updatableLocked(name, newName string) (*serverState, error) {
	if m.closed {
		return nil, ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		return nil, fmt.Errorf("update config %q: %w", name, ErrUnknownServer)
	}
	if newName != name {
		if _, dup := m.servers[newName]; dup {
			return nil, fmt.Errorf("rename %q to %q: %w", name, newName, ErrDuplicateServer)
		}
	}
	return s, nil
}

// RemoveConfig disconnects and forgets a server, and its approval: the
// user removed it.
func (m *Manager) RemoveConfig(ctx context.Context, name string) error {
	m.trustMu.Lock()
	defer m.trustMu.Unlock()
	m.mu.Lock()
	_, ok := m.servers[name]
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("remove config %q: %w", name, ErrUnknownServer)
	}
	if err := m.trust.SetApproval(ctx, name, ""); err != nil {
		return fmt.Errorf("remove config %q: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.approved, name)
	s, ok := m.servers[name]
	if !ok {
		return fmt.Errorf("remove config %q: %w", name, ErrUnknownServer)
	}
	m.closeLater(m.resetLocked(s))
	delete(m.servers, name)
	m.order = slices.DeleteFunc(m.order, func(n string) bool { return n == name })
	m.syncLocked()
	return nil
}
