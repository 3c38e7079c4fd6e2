package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// Server states reported by Status.
const (
	StateDisabled   = "disabled"   // enabled:false in the config
	StateUntrusted  = "untrusted"  // waits for the user's trust (Status.Trust says why); never started
	StateConnecting = "connecting" // a handshake is running
	StateConnected  = "connected"  // tools registered
	StateFailed     = "failed"     // the connect failed or the server died
	StateClosed     = "closed"     // not connected (never, disconnected, or closed)
	// StateNeedsAuth (oauth.go): a remote server wants a sign-in.
)

// Defaults of Options.
const (
	DefaultCallTimeout    = 300 * time.Second
	DefaultConnectTimeout = 30 * time.Second
)

// Options configure a Manager. Zero values take the defaults.
type Options struct {
	Lazy LazyOptions
	// CallTimeout bounds one tool call; default MCP_CALL_TIMEOUT_MS or 300 s.
	CallTimeout time.Duration
	// ConnectTimeout bounds one handshake; default 30 s.
	ConnectTimeout time.Duration
	// Workspace is the project directory: the default (and base of a
	// relative) cwd of stdio servers.
	Workspace string
	// Builtin is what the builtin presets (OCR) need.
	Builtin BuiltinContext
	// Trust keeps the user's approvals of the configs (see TrustTrusted);
	// nil keeps them in memory for the manager's life. A config that is not
	// approved is never started or contacted.
	Trust TrustStore
	// TrustAll trusts every config: for an embedding program that wrote the
	// configs itself. The sidecar never sets it for a project's file.
	TrustAll bool
	// OnStatus is told every state change of a server (connecting,
	// connected, failed, died, closed); the sidecar sends an mcp.status
	// notification. Calls come one at a time, in the order of the changes,
	// from any goroutine, without the manager's lock, and before Status
	// reports the change; OnStatus must not call Status (it waits for
	// OnStatus).
	OnStatus func(protocol.MCPStatus)
	Logger   *slog.Logger
	// Secrets keeps the sign-ins of remote servers (oauth.go); nil: no
	// sign-in (Login fails with ErrNoSecrets, servers dial without).
	Secrets Secrets
	// LoginTimeout bounds a sign-in's wait for its callback; default
	// DefaultLoginTimeout.
	LoginTimeout time.Duration
}

// LazyOptions tune lazy loading (seed §15.4).
type LazyOptions struct {
	// Enabled forces lazy mode on or off; nil = ZQAGENT_MCP_LAZY (1/0) when
	// set, else automatic by the thresholds.
	Enabled *bool
	// ThresholdTools: lazy when the connected servers have more tools than
	// this (default 16).
	ThresholdTools int
	// ThresholdChars: lazy when their names, descriptions and schemas are
	// longer than this (default 24000).
	ThresholdChars int
	// MaxLoaded caps the tools loaded by mcp_search_tools (default 40);
	// the least recently used are unloaded first.
	MaxLoaded int
}

// Manager owns one project's MCP servers: their configs, connections and
// the registration of their tools into the attached registries.
type Manager struct {
	opts   Options
	log    *slog.Logger
	dialer *dialer
	stop   context.CancelFunc // ends dialer.base
	wg     sync.WaitGroup     // stderr readers, watchers, lost-connection closers
	trust  TrustStore
	// signIns are the sign-ins of remote servers (oauth.go).
	signIns *signIns

	// fileMu makes an Edit (config edits and the save of the watched file)
	// and a reload of that file (read, then apply) one step each: a reload
	// never applies a file read before an edit's save over that edit.
	// Lock order: fileMu, trustMu, emitMu, mu.
	fileMu sync.Mutex

	// trustMu serializes approval writes (the TrustStore, then approved).
	// Lock order: trustMu, emitMu, mu.
	trustMu sync.Mutex

	// emitMu serializes the hand-over of queued statuses to OnStatus; mu is
	// never held while taking it.
	emitMu sync.Mutex

	mu         sync.Mutex
	pending    []protocol.MCPStatus    // guarded by mu; changes not yet handed to OnStatus, oldest first
	order      []string                // guarded by mu; config order
	servers    map[string]*serverState // guarded by mu
	regs       []*tools.Registry       // guarded by mu; attached registries
	registered map[string]bool         // guarded by mu; names this manager registered
	index      map[string]toolRef      // guarded by mu; registered name → tool, every connected tool
	names      []string                // guarded by mu; the keys of index in config then server order
	lazy       bool                    // guarded by mu; lazy mode is on
	loaded     []string                // guarded by mu; lazily loaded names, least recently used first
	approved   map[string]string       // guarded by mu; the TrustStore's approvals, server → hash
	closed     bool                    // guarded by mu
}

// serverState is one configured server.
type serverState struct {
	cfg     ServerConfig
	state   string
	lastErr string
	conn    *conn
	tools   []mcp.Tool
	gen     uint64 // bumped by every connect or disconnect; stale handshakes are dropped
}

// NewManager returns a manager of cfgs (usually WithBuiltinConfigs of the
// project's file). It connects nothing: call ConnectAll.
func NewManager(cfgs []ServerConfig, opts Options) *Manager {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
		if ms, err := strconv.Atoi(os.Getenv("MCP_CALL_TIMEOUT_MS")); err == nil && ms > 0 {
			opts.CallTimeout = time.Duration(ms) * time.Millisecond
		}
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.Lazy.ThresholdTools <= 0 {
		opts.Lazy.ThresholdTools = 16
	}
	if opts.Lazy.ThresholdChars <= 0 {
		opts.Lazy.ThresholdChars = 24000
	}
	if opts.Lazy.MaxLoaded <= 0 {
		opts.Lazy.MaxLoaded = 40
	}
	if opts.Lazy.Enabled == nil {
		switch os.Getenv("ZQAGENT_MCP_LAZY") {
		case "1", "true":
			on := true
			opts.Lazy.Enabled = &on
		case "0", "false":
			off := false
			opts.Lazy.Enabled = &off
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LoginTimeout <= 0 {
		opts.LoginTimeout = DefaultLoginTimeout
	}
	base, stop := context.WithCancel(context.Background())
	m := &Manager{
		opts:       opts,
		log:        opts.Logger,
		stop:       stop,
		trust:      opts.Trust,
		servers:    map[string]*serverState{},
		registered: map[string]bool{},
		index:      map[string]toolRef{},
		signIns:    newSignIns(opts),
	}
	m.dialer = &dialer{
		base: base, workspace: opts.Workspace, builtin: opts.Builtin,
		logger: opts.Logger, wg: &m.wg, onLost: m.onLost, onToolsChanged: m.onToolsChanged,
		signIns: m.signIns,
	}
	if m.trust == nil {
		m.trust = &memTrust{}
	}
	m.loadApprovals()
	for _, c := range cfgs {
		if _, dup := m.servers[c.Name]; dup || c.Name == "" {
			continue
		}
		m.order = append(m.order, c.Name)
		m.servers[c.Name] = &serverState{cfg: c.Clone(), state: m.idleLocked(c)}
	}
	m.lazy = m.lazyWanted()
	return m
}

// idleLocked is the state of a server with config c and no connection.
func (m *Manager) idleLocked(c ServerConfig) string {
	switch {
	case !c.Enabled:
		return StateDisabled
	case m.trustLocked(c) != TrustTrusted:
		return StateUntrusted
	}
	return StateClosed
}

// ConnectAll connects every enabled, trusted server concurrently and waits
// for all of them: the names that connected (in config order) and, for the
// others, why not. An enabled server that is not trusted is not started:
// OnStatus is told it waits for trust, and its error is ErrUntrusted.
func (m *Manager) ConnectAll(ctx context.Context) (connected []string, failed map[string]error) {
	failed = map[string]error{}
	m.mu.Lock()
	var names []string
	for _, n := range m.order {
		s := m.servers[n]
		switch {
		case !s.cfg.Enabled:
		case m.trustLocked(s.cfg) != TrustTrusted:
			failed[n] = fmt.Errorf("connect %s: %w", n, ErrUntrusted)
			m.announceLocked(s)
		default:
			names = append(names, n)
		}
	}
	m.mu.Unlock()
	m.flush()
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() { errs[i] = m.Connect(ctx, n) })
	}
	wg.Wait()
	for i, n := range names {
		if errs[i] != nil {
			failed[n] = errs[i]
		} else {
			connected = append(connected, n)
		}
	}
	return connected, failed
}

// Connect connects one server and registers its tools. A connected server
// is left as it is (Refresh reconnects).
func (m *Manager) Connect(ctx context.Context, name string) error {
	return m.connect(ctx, name, false)
}

// Refresh disconnects a server, connects it again and registers its tools
// anew: how a failed or dead server is brought back.
func (m *Manager) Refresh(ctx context.Context, name string) error {
	return m.connect(ctx, name, true)
}

func (m *Manager) connect(ctx context.Context, name string, force bool) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("connect %s: %w", name, ErrUnknownServer)
	}
	if !s.cfg.Enabled {
		m.mu.Unlock()
		return fmt.Errorf("connect %s: %w", name, ErrDisabled)
	}
	if t := m.trustLocked(s.cfg); t != TrustTrusted {
		m.mu.Unlock()
		return fmt.Errorf("connect %s: %w (%s: approve it with mcp.trust)", name, ErrUntrusted, t)
	}
	if !force && s.conn != nil && s.state == StateConnected {
		m.mu.Unlock()
		return nil
	}
	s.gen++
	gen, old, cfg := s.gen, s.conn, s.cfg.Clone()
	s.conn, s.tools, s.state, s.lastErr = nil, nil, StateConnecting, ""
	m.syncLocked()
	m.announceLocked(s)
	m.mu.Unlock()
	m.flush()
	if old != nil {
		_ = old.close()
	}

	timeout := m.opts.ConnectTimeout
	if cfg.Timeout > 0 {
		timeout = cfg.Timeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	c, list, err := m.dialer.dial(dctx, cfg)
	cancel()

	m.mu.Lock()
	if m.closed || m.servers[name] != s || s.gen != gen {
		m.mu.Unlock()
		if c != nil {
			_ = c.close()
		}
		if err == nil {
			err = errors.New("superseded by a later change")
		}
		return fmt.Errorf("connect %s: %w", name, err)
	}
	if err != nil {
		s.state, s.lastErr = m.failedStateLocked(s, err), err.Error()
	} else {
		s.conn, s.tools, s.state = c, list, StateConnected
	}
	m.syncLocked()
	m.announceLocked(s)
	m.mu.Unlock()
	m.flush()
	if err != nil {
		m.log.Warn("mcp connect failed", "server", name, "err", err)
		return err
	}
	m.log.Info("mcp connected", "server", name, "tools", len(list))
	return nil
}

// Disconnect closes a server's connection and unregisters its tools.
func (m *Manager) Disconnect(name string) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("disconnect %s: %w", name, ErrUnknownServer)
	}
	old := m.resetLocked(s)
	m.syncLocked()
	m.announceLocked(s)
	m.mu.Unlock()
	m.flush()
	if old != nil {
		_ = old.close()
	}
	return nil
}

// resetLocked takes a server's connection away (the caller closes it) and
// puts the server back to its idle state.
func (m *Manager) resetLocked(s *serverState) *conn {
	s.gen++
	old := s.conn
	s.conn, s.tools, s.lastErr = nil, nil, ""
	s.state = m.idleLocked(s.cfg)
	return old
}

// onLost marks a server whose connection went away as failed.
func (m *Manager) onLost(c *conn, err error) {
	m.mu.Lock()
	s, ok := m.servers[c.name]
	if !ok || s.conn != c || m.closed {
		m.mu.Unlock()
		return
	}
	s.gen++
	s.conn, s.tools, s.state, s.lastErr = nil, nil, StateFailed, err.Error()
	m.syncLocked()
	m.announceLocked(s)
	// Reap the child off the caller's path (the caller may be the client's
	// own reader). Added under the lock, so never after CloseAll's Wait.
	m.closeLater(c)
	m.mu.Unlock()
	m.flush()
	m.log.Warn("mcp server lost", "server", c.name, "err", err)
}

// onToolsChanged re-lists the tools of a server that sent
// notifications/tools/list_changed and registers them anew.
func (m *Manager) onToolsChanged(c *conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.servers[c.name] == nil || m.servers[c.name].conn != c {
		return
	}
	// Not on the notifying goroutine: it is the one that reads the answer.
	m.wg.Go(func() {
		ctx, cancel := context.WithTimeout(m.dialer.base, m.opts.ConnectTimeout)
		defer cancel()
		list, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			m.log.Warn("mcp re-list tools", "server", c.name, "err", err)
			return
		}
		m.mu.Lock()
		s := m.servers[c.name]
		if s == nil || s.conn != c || m.closed {
			m.mu.Unlock()
			return
		}
		s.tools = list.Tools
		m.syncLocked()
		m.announceLocked(s)
		m.mu.Unlock()
		m.flush()
	})
}

// Status reports every server, in config order. It returns after OnStatus
// was told every change it reports.
func (m *Manager) Status() []protocol.MCPStatus {
	m.mu.Lock()
	out := make([]protocol.MCPStatus, 0, len(m.order))
	for _, n := range m.order {
		out = append(out, m.statusLocked(m.servers[n]))
	}
	m.mu.Unlock()
	m.flush()
	return out
}

func (m *Manager) statusLocked(s *serverState) protocol.MCPStatus {
	st := protocol.MCPStatus{
		Name: s.cfg.Name, Type: s.cfg.Type, State: s.state, Enabled: s.cfg.Enabled,
		Tools: len(s.tools), LastError: s.lastErr, Lazy: m.lazy,
		Trust: m.trustLocked(s.cfg), Run: s.cfg.Run(),
	}
	if st.Run != nil {
		st.Hash = s.cfg.Hash()
	}
	return st
}

// announceLocked queues the status of s for OnStatus, in the order of the
// changes; the caller calls flush once mu is released.
func (m *Manager) announceLocked(s *serverState) {
	if m.opts.OnStatus != nil {
		m.pending = append(m.pending, m.statusLocked(s))
	}
}

// flush hands the queued statuses to OnStatus, oldest first. Every change
// is queued under mu in the same critical section that makes it, and
// whoever reads a state (Status) flushes before returning it, so no caller
// sees a state before its notification was sent.
func (m *Manager) flush() {
	if m.opts.OnStatus == nil {
		return
	}
	m.emitMu.Lock()
	defer m.emitMu.Unlock()
	m.mu.Lock()
	sts := m.pending
	m.pending = nil
	m.mu.Unlock()
	for _, st := range sts {
		m.opts.OnStatus(st)
	}
}

// CloseAll disconnects every server (stdio children and their process
// groups are killed), unregisters the tools from every attached registry,
// stops the watchers and waits for the manager's goroutines. The manager
// cannot be used afterwards.
func (m *Manager) CloseAll() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	var conns []*conn
	for _, n := range m.order {
		s := m.servers[n]
		if c := m.resetLocked(s); c != nil {
			conns = append(conns, c)
		}
		if s.state != StateDisabled {
			s.state = StateClosed
		}
	}
	m.syncLocked()
	m.closed = true
	for _, n := range m.order {
		m.announceLocked(m.servers[n])
	}
	m.mu.Unlock()

	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { errs[i] = c.close() })
	}
	wg.Wait()
	m.stop()
	m.wg.Wait()
	m.flush()
	return errors.Join(errs...)
}

// closeLater closes a taken connection in a tracked goroutine, for callers
// that hold the lock.
func (m *Manager) closeLater(c *conn) {
	if c != nil {
		m.wg.Go(func() { _ = c.close() })
	}
}
