package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/protocol"
)

// Trust of a server config, reported in Status.Trust. A project's
// .agent/mcp.json comes with the repository: none of its servers is started
// or contacted until the user approved that exact config (its Hash).
const (
	TrustTrusted   = "trusted"   // approved (or a builtin preset, or Options.TrustAll)
	TrustUntrusted = "untrusted" // never approved
	TrustChanged   = "changed"   // approved once, then the config changed
)

// TrustStore keeps the user's approvals of one project's server configs: the
// approved Hash per server name. The sidecar keeps them in its data dir,
// never in the project.
type TrustStore interface {
	// Approvals returns the approved hash of every approved server.
	Approvals(ctx context.Context) (map[string]string, error)
	// SetApproval records hash as approved for server; "" revokes.
	SetApproval(ctx context.Context, server, hash string) error
}

// memTrust keeps approvals for the life of the manager (Options.Trust nil).
type memTrust struct {
	mu sync.Mutex
	m  map[string]string // guarded by mu
}

func (t *memTrust) Approvals(context.Context) (map[string]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.m), nil
}

func (t *memTrust) SetApproval(_ context.Context, server, hash string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]string{}
	}
	if hash == "" {
		delete(t.m, server)
	} else {
		t.m[server] = hash
	}
	return nil
}

// Run returns what c runs or contacts, as written (the trust card): ${VAR}
// references are shown unexpanded, and Hash covers exactly these fields
// (values included: an env value such as LD_PRELOAD changes what runs as
// much as the command does). Vars are the variables the config refers to,
// sorted; SecretVars are those of them that never expand (the sidecar's
// secrets: *_API_KEY, ZQAGENT_TOKEN...). nil for a builtin preset
// (in-process code of the sidecar).
func (c ServerConfig) Run() *protocol.MCPRun {
	if c.Type == TypeBuiltin {
		return nil
	}
	r := &protocol.MCPRun{Cwd: c.Cwd, URL: c.URL, Env: maps.Clone(c.Env), Headers: maps.Clone(c.Headers)}
	if len(c.Command) > 0 {
		r.Command, r.Args = c.Command[0], slices.Clone(c.Command[1:])
	}
	vars := map[string]bool{}
	note := func(s string) {
		for _, m := range varRef.FindAllStringSubmatch(s, -1) {
			vars[m[2]] = true
		}
	}
	for _, w := range c.Command {
		note(w)
	}
	for _, v := range c.Env {
		note(v)
	}
	for _, v := range c.Headers {
		note(v)
	}
	note(c.Cwd)
	note(c.URL)
	for v := range vars {
		r.Vars = append(r.Vars, v)
		if proc.IsSecret(v) {
			r.SecretVars = append(r.SecretVars, v)
		}
	}
	sort.Strings(r.Vars)
	sort.Strings(r.SecretVars)
	return r
}

// Hash identifies what c runs or contacts: a SHA-256 over its type,
// command words, cwd, url, env and headers as written. An approval is for
// one hash; any change to those fields needs a new one. Enabled and timeout
// are not covered.
func (c ServerConfig) Hash() string {
	pairs := func(m map[string]string) [][2]string {
		out := [][2]string{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, [2]string{k, m[k]})
		}
		return out
	}
	norm := struct {
		Type    string      `json:"type"`
		Command []string    `json:"command"`
		Cwd     string      `json:"cwd"`
		URL     string      `json:"url"`
		Env     [][2]string `json:"env"`
		Headers [][2]string `json:"headers"`
		// OAuth is the "oauth" object (oauth.go); absent when none, so
		// configs without one hash as they did before it existed.
		OAuth json.RawMessage `json:"oauth,omitempty"`
	}{c.Type, append([]string{}, c.Command...), c.Cwd, c.URL, pairs(c.Env), pairs(c.Headers), c.oauthHashField()}
	b, _ := json.Marshal(norm) // strings only: cannot fail
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// lookupVar is how a trusted config's ${VAR} expands: the sidecar's
// environment, except its secrets, which never expand.
func lookupVar(name string) (string, bool) {
	if proc.IsSecret(name) {
		return "", false
	}
	return os.LookupEnv(name)
}

// expandConfig returns c with every ${VAR} and ${env:VAR} replaced by
// lookup's value ("" when unset or refused). Only a trusted config is
// expanded, right before it is connected.
func expandConfig(c ServerConfig, lookup func(string) (string, bool)) ServerConfig {
	x := func(s string) string {
		if !strings.Contains(s, "${") {
			return s
		}
		return varRef.ReplaceAllStringFunc(s, func(m string) string {
			v, _ := lookup(varRef.FindStringSubmatch(m)[2])
			return v
		})
	}
	c = c.Clone()
	for i := range c.Command {
		c.Command[i] = x(c.Command[i])
	}
	for k, v := range c.Env {
		c.Env[k] = x(v)
	}
	for k, v := range c.Headers {
		c.Headers[k] = x(v)
	}
	c.Cwd = x(c.Cwd)
	c.URL = strings.TrimSpace(x(c.URL))
	return c
}

// trustLocked is the trust of s's config.
func (m *Manager) trustLocked(c ServerConfig) string {
	if m.opts.TrustAll || c.Type == TypeBuiltin {
		return TrustTrusted
	}
	h, ok := m.approved[c.Name]
	switch {
	case !ok:
		return TrustUntrusted
	case h == c.Hash():
		return TrustTrusted
	}
	return TrustChanged
}

// loadApprovals reads the approvals at creation; an unreadable store means
// nothing is approved (every project server waits for trust).
func (m *Manager) loadApprovals() {
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.ConnectTimeout)
	defer cancel()
	a, err := m.trust.Approvals(ctx)
	if err != nil {
		m.log.Warn("mcp trust: cannot read approvals; project servers wait for trust", "err", err)
		a = nil
	}
	m.approved = maps.Clone(a)
	if m.approved == nil {
		m.approved = map[string]string{}
	}
}

// Trust approves the config of server name whose Hash is hash (what the
// user was shown) and records it in the TrustStore. A hash that is not the
// current config's is refused with ErrStaleHash. It does not connect: call
// Connect.
func (m *Manager) Trust(ctx context.Context, name, hash string) error {
	m.trustMu.Lock()
	defer m.trustMu.Unlock()
	m.mu.Lock()
	s, err := m.serverLocked(name)
	if err != nil {
		m.mu.Unlock()
		return fmt.Errorf("trust: %w", err)
	}
	if cur := s.cfg.Hash(); hash != cur {
		m.mu.Unlock()
		return fmt.Errorf("trust %s: %w: approved %s, the config now is %s; list the servers again", name, ErrStaleHash, hash, cur)
	}
	if m.trustLocked(s.cfg) == TrustTrusted {
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	if err := m.trust.SetApproval(ctx, name, hash); err != nil {
		return fmt.Errorf("trust %s: %w", name, err)
	}
	m.setApproved(name, hash)
	return nil
}

// Untrust revokes the approval of server name: a running server is stopped
// and waits for trust again. Builtin presets are always trusted.
func (m *Manager) Untrust(ctx context.Context, name string) error {
	m.trustMu.Lock()
	defer m.trustMu.Unlock()
	m.mu.Lock()
	s, err := m.serverLocked(name)
	if err == nil && s.cfg.Type == TypeBuiltin {
		err = fmt.Errorf("%w: %q is a builtin preset of the sidecar and always trusted", ErrInvalidConfig, name)
	}
	m.mu.Unlock()
	if err != nil {
		return fmt.Errorf("untrust: %w", err)
	}
	if err := m.trust.SetApproval(ctx, name, ""); err != nil {
		return fmt.Errorf("untrust %s: %w", name, err)
	}
	m.setApproved(name, "")
	return nil
}

// approve records the approval of c by the user's own edit (AddConfig,
// UpdateConfig of a trusted server). m.trustMu is held, m.mu is not.
func (m *Manager) approve(ctx context.Context, c ServerConfig) error {
	if m.opts.TrustAll || c.Type == TypeBuiltin {
		return nil
	}
	if err := m.trust.SetApproval(ctx, c.Name, c.Hash()); err != nil {
		return fmt.Errorf("record trust of %s: %w", c.Name, err)
	}
	return nil
}

// setApproved updates the cached approval of name ("" revokes) and brings
// the server's state in line: a server that lost its trust is stopped, one
// that gained it is idle (closed) until connected.
func (m *Manager) setApproved(name, hash string) {
	m.mu.Lock()
	if hash == "" {
		delete(m.approved, name)
	} else {
		m.approved[name] = hash
	}
	s, ok := m.servers[name]
	if !ok || m.closed {
		m.mu.Unlock()
		return
	}
	var old *conn
	switch {
	case m.trustLocked(s.cfg) != TrustTrusted:
		old = m.resetLocked(s)
	case s.state == StateUntrusted:
		s.state = m.idleLocked(s.cfg)
	}
	m.syncLocked()
	m.announceLocked(s)
	m.closeLater(old)
	m.mu.Unlock()
	m.flush()
}

func (m *Manager) serverLocked(name string) (*serverState, error) {
	if m.closed {
		return nil, ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		return nil, fmt.Errorf("%q: %w", name, ErrUnknownServer)
	}
	return s, nil
}
