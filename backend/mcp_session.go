package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// Session MCP servers (mcp.sessionAdd, mcp.sessionTrust): servers a client
// passes for one session instead of the project's file — an ACP editor's
// own servers, from session/new. They follow the project servers' trust
// rule: none is started or contacted until the user approved its exact
// config (its mcp.ServerConfig.Hash). An approval is for the session
// (remember false: kept in memory only) or remembered for the session's
// project (a list of hashes in the database, setting
// "mcp.sessionTrust/<projectId>"; the project scopes it because a relative
// command or a package runner resolves against the workspace). They are
// never written to the project's file, and their configs (env and header
// values included) are never stored or logged: they live in the memory of
// this process, bound to the connection that added them, and are closed
// (their processes killed) when that connection ends, when the session is
// deleted, when a later mcp.sessionAdd replaces them, or when the server
// closes. Their tools join only that session's engine, never lazily (the
// project's manager owns the lazy meta tools), and a name the project's
// servers use is refused, so grants of a project server never cover them.

// maxSessionMCPServers bounds the servers of one mcp.sessionAdd.
const maxSessionMCPServers = 32

// maxRememberedSessionTrust bounds the hashes remembered per project; the
// oldest are forgotten first (they are asked again).
const maxRememberedSessionTrust = 256

// sessionMCPs holds the session servers of the sessions of this process.
type sessionMCPs struct {
	// edit serializes mcp.sessionAdd and the closes, so that an old set's
	// tools are gone from the engine before the new set registers its own.
	// Taken before mu.
	edit sync.Mutex
	// trustMu serializes the read-modify-write of remembered hashes.
	trustMu sync.Mutex

	mu        sync.Mutex // leaf: guards bySession, closed
	bySession map[string]*sessionMCP
	closed    bool
}

// sessionMCP is one session's servers and the connection they belong to.
type sessionMCP struct {
	sessionID string
	owner     Client
	mgr       *mcp.Manager
	trust     *sessionTrust
}

// sessionTrust is the mcp.TrustStore of one session's servers: a config is
// approved when its hash is remembered for the project; an approval for
// the session only lives in the manager's memory (SetApproval keeps
// nothing).
type sessionTrust struct {
	s      *Backend
	key    string            // the setting of the project's remembered hashes
	hashes map[string]string // server name → config hash, of this session
}

var _ mcp.TrustStore = (*sessionTrust)(nil)

func (t *sessionTrust) remembered(ctx context.Context) ([]string, error) {
	raw, err := t.s.opts.Store.Setting(ctx, t.key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read remembered MCP approvals: %w", err)
	}
	var hs []string
	if err := json.Unmarshal(raw, &hs); err != nil {
		return nil, fmt.Errorf("read remembered MCP approvals: %w", err)
	}
	return hs, nil
}

// Approvals implements mcp.TrustStore.
func (t *sessionTrust) Approvals(ctx context.Context) (map[string]string, error) {
	hs, err := t.remembered(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, h := range t.hashes {
		if slices.Contains(hs, h) {
			out[name] = h
		}
	}
	return out, nil
}

// SetApproval implements mcp.TrustStore: an approval for the session is
// the manager's own (in memory); remember records one for the project.
func (t *sessionTrust) SetApproval(context.Context, string, string) error { return nil }

// remember adds hash to the project's remembered approvals.
func (t *sessionTrust) remember(ctx context.Context, hash string) error {
	t.s.smcp.trustMu.Lock()
	defer t.s.smcp.trustMu.Unlock()
	hs, err := t.remembered(ctx)
	if err != nil {
		return err
	}
	if slices.Contains(hs, hash) {
		return nil
	}
	hs = append(hs, hash)
	if over := len(hs) - maxRememberedSessionTrust; over > 0 {
		hs = hs[over:]
	}
	raw, err := json.Marshal(hs)
	if err != nil {
		return fmt.Errorf("remember MCP approval: %w", err)
	}
	// A cancelled request must not leave the approval half recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpTrustWriteTimeout)
	defer cancel()
	if err := t.s.opts.Store.SetSetting(ctx, t.key, raw); err != nil {
		return fmt.Errorf("remember MCP approval: %w", err)
	}
	return nil
}

// mcpSessionAdd gives a session the servers of the calling connection
// (replacing its earlier ones) and connects those whose trust the project
// remembers, waiting for their handshakes; the others wait for
// mcp.sessionTrust.
func (b *Backend) AddSessionMCP(ctx context.Context, c Client, p protocol.MCPSessionAddParams) (protocol.MCPSessionAddResult, error) {
	if len(p.Servers) > maxSessionMCPServers {
		return protocol.MCPSessionAddResult{}, protocol.InvalidField("servers", fmt.Sprintf("at most %d servers", maxSessionMCPServers))
	}
	ss, err := b.opts.Store.Session(ctx, p.SessionID)
	if err != nil {
		return protocol.MCPSessionAddResult{}, err
	}
	pr, err := b.projectOf(ctx, ss.ProjectID)
	if err != nil {
		return protocol.MCPSessionAddResult{}, err
	}
	taken := map[string]bool{}
	if pm := b.mcpOf(ss.ProjectID); pm != nil {
		for _, cfg := range pm.mgr.Configs() {
			taken[cfg.Name] = true
		}
	}
	cfgs := make([]mcp.ServerConfig, 0, len(p.Servers))
	hashes := map[string]string{}
	for i, rawCfg := range p.Servers {
		field := fmt.Sprintf("servers[%d]", i)
		cfg, _, err := mcp.ParseServer(rawCfg, "")
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			return protocol.MCPSessionAddResult{}, protocol.InvalidField(field, err.Error())
		}
		switch {
		case cfg.Type == mcp.TypeBuiltin:
			return protocol.MCPSessionAddResult{}, protocol.InvalidField(field+".type", "builtin presets are the project's")
		case taken[cfg.Name]:
			return protocol.MCPSessionAddResult{}, protocol.InvalidField(field+".name", fmt.Sprintf("%q is a server of the project", cfg.Name))
		case hashes[cfg.Name] != "":
			return protocol.MCPSessionAddResult{}, protocol.InvalidField(field+".name", fmt.Sprintf("%q is given twice", cfg.Name))
		}
		cfg.Enabled = true
		hashes[cfg.Name] = cfg.Hash()
		cfgs = append(cfgs, cfg)
	}

	sm, err := b.replaceSessionMCP(c, p.SessionID, pr.Path, ss.ProjectID, cfgs, hashes)
	if err != nil {
		return protocol.MCPSessionAddResult{}, err
	}
	sm.mgr.ConnectAll(ctx) // the untrusted ones are not started
	return protocol.MCPSessionAddResult{Servers: serversOf(sm.mgr)}, nil
}

// replaceSessionMCP closes the session's servers and installs cfgs as its
// new ones, attached to its engine when it is loaded.
func (b *Backend) replaceSessionMCP(c Client, sessionID, root, projectID string, cfgs []mcp.ServerConfig, hashes map[string]string) (*sessionMCP, error) {
	b.smcp.edit.Lock()
	defer b.smcp.edit.Unlock()
	b.closeSessionMCPEditLocked(sessionID, nil)
	off := false
	trust := &sessionTrust{s: b, key: "mcp.sessionTrust/" + projectID, hashes: hashes}
	sm := &sessionMCP{sessionID: sessionID, owner: c, trust: trust}
	sm.mgr = mcp.NewManager(cfgs, mcp.Options{
		Workspace: root,
		Lazy:      mcp.LazyOptions{Enabled: &off},
		Trust:     trust,
		Logger:    b.log.With("session", sessionID, "mcp", "session"),
	})
	b.smcp.mu.Lock()
	if b.smcp.closed {
		b.smcp.mu.Unlock()
		_ = sm.mgr.CloseAll()
		return nil, fmt.Errorf("mcp.sessionAdd: %w", mcp.ErrClosed)
	}
	if b.smcp.bySession == nil {
		b.smcp.bySession = map[string]*sessionMCP{}
	}
	b.smcp.bySession[sessionID] = sm
	b.smcp.mu.Unlock()
	if h := b.loadedHost(sessionID); h != nil {
		if eng := h.Loaded(); eng != nil {
			attachSessionEngine(sm, eng)
		}
	}
	return sm, nil
}

// mcpSessionTrust approves a session server's config (the hash its card
// showed), for the session or, with remember, for the project; then
// connects it and waits for the handshake (a failed one is the server's
// state, not an error of the call).
func (b *Backend) TrustSessionMCP(ctx context.Context, p protocol.MCPSessionTrustParams) (protocol.MCPServerResult, error) {
	sm := b.sessionMCPOf(p.SessionID)
	if sm == nil {
		return protocol.MCPServerResult{}, fmt.Errorf("%w: session %s has no MCP servers of a client (mcp.sessionAdd)", ErrNotFound, p.SessionID)
	}
	if err := sm.mgr.Trust(ctx, p.Name, p.Hash); err != nil {
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.sessionTrust: %w", err)
	}
	if p.Remember {
		if err := sm.trust.remember(ctx, p.Hash); err != nil {
			return protocol.MCPServerResult{}, fmt.Errorf("mcp.sessionTrust: %w", err)
		}
	}
	err := sm.mgr.Connect(ctx, p.Name)
	switch {
	case errors.Is(err, mcp.ErrClosed):
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.sessionTrust: %w", err)
	case err != nil && ctx.Err() != nil:
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.sessionTrust: %w", ctx.Err())
	}
	for _, info := range serversOf(sm.mgr) {
		if info.Name == p.Name {
			return protocol.MCPServerResult{Server: info, Warnings: []protocol.MCPWarning{}}, nil
		}
	}
	return protocol.MCPServerResult{}, fmt.Errorf("%w: MCP server %q: %w", ErrNotFound, p.Name, mcp.ErrUnknownServer)
}

func (b *Backend) sessionMCPOf(sessionID string) *sessionMCP {
	b.smcp.mu.Lock()
	defer b.smcp.mu.Unlock()
	return b.smcp.bySession[sessionID]
}

// attachSessionMCP gives a session engine its session servers' tools.
func (b *Backend) attachSessionMCP(eng *engine.Engine, sessionID string) {
	if sm := b.sessionMCPOf(sessionID); sm != nil {
		attachSessionEngine(sm, eng)
	}
}

func attachSessionEngine(sm *sessionMCP, eng *engine.Engine) {
	reg := eng.Registry()
	sm.mgr.Attach(reg)
	eng.AddCloser(func() error {
		sm.mgr.Detach(reg)
		return nil
	})
}

// closeSessionMCP closes a session's servers (session.delete).
func (b *Backend) closeSessionMCP(sessionID string) {
	b.smcp.edit.Lock()
	defer b.smcp.edit.Unlock()
	b.closeSessionMCPEditLocked(sessionID, nil)
}

// closeSessionMCPEditLocked closes the session's servers when owner is nil
// or added them. s.smcp.edit is held.
func (b *Backend) closeSessionMCPEditLocked(sessionID string, owner Client) {
	b.smcp.mu.Lock()
	sm := b.smcp.bySession[sessionID]
	if sm == nil || (owner != nil && sm.owner != owner) {
		b.smcp.mu.Unlock()
		return
	}
	delete(b.smcp.bySession, sessionID)
	b.smcp.mu.Unlock()
	if err := sm.mgr.CloseAll(); err != nil {
		b.log.Warn("close the session's MCP servers", "session", sessionID, "err", err)
	}
}

// dropSessionMCPs closes the session servers a connection added: it ended.
func (b *Backend) dropSessionMCPs(c Client) {
	b.smcp.edit.Lock()
	defer b.smcp.edit.Unlock()
	b.smcp.mu.Lock()
	var ids []string
	for id, sm := range b.smcp.bySession {
		if sm.owner == c {
			ids = append(ids, id)
		}
	}
	b.smcp.mu.Unlock()
	for _, id := range ids {
		b.closeSessionMCPEditLocked(id, c)
	}
}

// closeAllSessionMCP closes every session's servers; none is added
// afterwards.
func (b *Backend) closeAllSessionMCP() error {
	b.smcp.edit.Lock()
	defer b.smcp.edit.Unlock()
	b.smcp.mu.Lock()
	b.smcp.closed = true
	sms := b.smcp.bySession
	b.smcp.bySession = nil
	b.smcp.mu.Unlock()
	var errs []error
	for _, sm := range sms {
		errs = append(errs, sm.mgr.CloseAll())
	}
	return errors.Join(errs...)
}
