package mcp

import (
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

// AddConfig adds a server (its type inferred when empty). It does not
// connect it: call Connect.
func (m *Manager) AddConfig(c ServerConfig) error {
	c = c.Clone()
	if c.Type == "" {
		c.Type = inferType(c)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("add config: %w", err)
	}
	c.auto = false
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if s, ok := m.servers[c.Name]; ok {
		if !s.cfg.auto {
			return fmt.Errorf("add config %q: %w", c.Name, ErrDuplicateServer)
		}
		// The user configures a builtin preset: it replaces the automatic one.
		old := m.resetLocked(s)
		s.cfg, s.state = c, idleState(c)
		m.syncLocked()
		m.closeLater(old)
		return nil
	}
	m.order = append(m.order, c.Name)
	m.servers[c.Name] = &serverState{cfg: c, state: idleState(c)}
	return nil
}

// UpdateConfig replaces the config of name (c.Name may rename it). Fields
// the file had but c leaves empty (Extra) are kept. A server whose
// connection settings changed is disconnected: call Connect to reconnect.
// OnStatus is told the server's new state.
func (m *Manager) UpdateConfig(name string, c ServerConfig) error {
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
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("update config %q: %w", name, ErrUnknownServer)
	}
	if c.Name != name {
		if _, dup := m.servers[c.Name]; dup {
			m.mu.Unlock()
			return fmt.Errorf("rename %q to %q: %w", name, c.Name, ErrDuplicateServer)
		}
	}
	c.auto = false
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
		s.state = idleState(c)
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

// RemoveConfig disconnects and forgets a server.
func (m *Manager) RemoveConfig(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
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
