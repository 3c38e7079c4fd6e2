package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/terminal"
)

// ProtocolVersion is the wire protocol version of the ready line and of
// initialize.
const ProtocolVersion = protocol.Version

// Defaults of the bounded queues.
const (
	DefaultSendQueueBytes   = 16 << 20
	DefaultSubscriberBuffer = 16384
	DefaultWriteTimeout     = 10 * time.Second
)

// Options configure a Server.
type Options struct {
	// Store is the open database (required). The server does not close it.
	Store *store.Store
	// Token is the shared secret every upgrade must carry (required).
	Token string
	// PeerToken, when set, is accepted like Token. The sidecar publishes it
	// in the data dir's endpoint file for the other front door of the same
	// data dir (sidecar acp), so that the shell's token never goes to disk.
	PeerToken string
	// AllowOrigins are the Origin values accepted (e.g. tauri://localhost),
	// and the presets electron and tauri (ExpandOrigins; New refuses a bad
	// one).
	AllowOrigins []string
	// SecurityLog, when set, gets one JSON line per refused upgrade (the
	// status, the reason, the Origin and Host sent, a hint; never the
	// token). The sidecar passes its stderr. Nil: the Logger gets them.
	SecurityLog io.Writer
	// Version is the sidecar's version, reported by initialize.
	Version string
	// DataDir is the sidecar's data directory.
	DataDir string
	// KeyringService is the OS keychain service name of the API keys.
	KeyringService string
	// Terminals is the PTY manager (terminal.* methods, the agent's
	// terminal tools). Nil: no terminals. The owner closes it after Close.
	Terminals *terminal.Manager
	// AuditLogDir, when set, makes every model provider write an audit log
	// of its requests there, one folder per day (keys and the
	// Authorization header redacted). Empty: no audit log.
	AuditLogDir string
	// Keyring holds the API keys (keys.* methods). Nil: keys.* report the
	// keychain as unavailable.
	Keyring *keychain.Keyring
	// OnEngine, when set, runs on each session's engine right after it was
	// built from the store and before any turn runs on it (on the goroutine
	// that loads it: the session's runner, or a turn.retry or turn.steer
	// handler): an embedder adjusts the engine there, e.g. the ACP front
	// door routes the file tools through the editor. It must not block.
	OnEngine func(sessionID string, eng *engine.Engine)
	// Provider, when set, answers every session's turns (embedding, tests);
	// otherwise the provider is chosen as described in provider.go.
	Provider llm.Provider
	// APIKey returns the configured API key ("" when none) at each model
	// request. Nil: the OPENAI_API_KEY environment variable.
	APIKey func(ctx context.Context) (string, error)
	// Logger receives the server's logs (never the token). Nil: slog.Default.
	Logger *slog.Logger
	// OnShutdown runs once, after the response to a shutdown request was
	// queued; it must only signal the owner (which then calls Close).
	OnShutdown func()
	// SendQueueBytes bounds each connection's outgoing queue, in bytes of
	// frames (a frame larger than the bound still goes when the queue is
	// empty).
	SendQueueBytes int
	// SubscriberBuffer bounds each subscription's buffer of live events; a
	// subscriber whose buffer fills is dropped.
	SubscriberBuffer int
	// WriteTimeout bounds one frame's write; a client that does not read for
	// this long is disconnected.
	WriteTimeout time.Duration
	// SystemLocale returns the OS locale tag, asked once when a session
	// needs the default language and the shell named none. Nil:
	// oslocale.Get.
	SystemLocale func() string
}

// Server is the WebSocket JSON-RPC server. Create it with New, serve with
// Serve, stop with Close.
type Server struct {
	opts Options
	log  *slog.Logger
	rpc  *wsrpc.Endpoint // the transport: upgrade checks, method table, connection limits

	ctx    context.Context // the server's lifetime; turns run under it
	cancel context.CancelFunc
	// bg is the context of background work no client waits for (session
	// naming): Close cancels it first, so shutdown never waits on it.
	bg       context.Context
	cancelBG context.CancelFunc
	wg       sync.WaitGroup    // connections, session runners
	hosts    *backend.Sessions // the sessions of this process (backend)

	shutdownOnce sync.Once
	providers    *providerSource
	models       modelsCache // models.list answers, per provider profile

	mu           sync.Mutex // guards conns, openProjects, closed, httpSrv
	conns        map[*conn]struct{}
	openProjects map[string]struct{}
	closed       bool
	httpSrv      *http.Server

	mcp  mcpProjects // MCP managers of the open projects (mcp_project.go)
	smcp sessionMCPs // MCP servers of one session, from a client (mcp_session.go)

	termSubs termRegistry    // terminal subscriptions per connection (terminal_stream.go)
	watchers projectWatchers // file watchers of the projects' ConflictGuards (watch_project.go)
	search   searchCache     // the web_search backend (websearch.go)
	lang     langState       // the shell's and the OS's locale (lang.go)
}

// New returns a server; nothing is listening yet.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("new server: %w: store is required", ErrConfig)
	}
	if opts.Token == "" {
		return nil, fmt.Errorf("new server: %w: token is required", ErrConfig)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SendQueueBytes <= 0 {
		opts.SendQueueBytes = DefaultSendQueueBytes
	}
	if opts.SubscriberBuffer <= 0 {
		opts.SubscriberBuffer = DefaultSubscriberBuffer
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.KeyringService == "" {
		opts.KeyringService = "zqagent"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:         opts,
		log:          opts.Logger,
		ctx:          ctx,
		cancel:       cancel,
		conns:        map[*conn]struct{}{},
		openProjects: map[string]struct{}{},
		lang:         newLangState(opts.SystemLocale),
	}
	s.bg, s.cancelBG = context.WithCancel(ctx)
	s.providers = newProviderSource(opts)
	s.hosts = backend.New(backend.Config{
		Store:            opts.Store,
		Logger:           opts.Logger,
		Context:          ctx,
		Background:       s.bg,
		WaitGroup:        &s.wg,
		SubscriberBuffer: opts.SubscriberBuffer,
		Engines:          engines{s},
		ApprovalTimeout:  func(ss store.Session) time.Duration { return msDuration(sessionSettings(ss).ApprovalTimeoutMS) },
		IsConfigError:    func(err error) bool { return wireError(err).Code == CodeConfig },
		Lang:             s.langOf,
		Closing:          s.isClosing,
	})
	routes, err := s.routeTable()
	if err != nil {
		cancel()
		return nil, err
	}
	s.rpc = &wsrpc.Endpoint{
		Token:          opts.Token,
		PeerToken:      opts.PeerToken,
		Context:        ctx,
		Methods:        routes,
		Gate:           "initialize",
		Ordered:        orderedMethods,
		ErrorCodes:     hostedErrorCodes,
		ErrorMessage:   func(kind protocol.ErrorKind) string { return engine.KindMessage(s.defaultLang(), string(kind)) },
		SendQueueBytes: opts.SendQueueBytes,
		WriteTimeout:   opts.WriteTimeout,
		Log:            opts.Logger,
	}
	if opts.SecurityLog != nil {
		s.rpc.SecurityLog = slog.New(slog.NewJSONHandler(opts.SecurityLog, nil))
	}
	if err := s.rpc.SetOrigins(opts.AllowOrigins); err != nil {
		cancel()
		return nil, fmt.Errorf("new server: %w: %w", ErrConfig, err)
	}
	return s, nil
}

// Serve accepts connections on ln (which must be a loopback TCP listener)
// until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		return fmt.Errorf("serve: %w: listener %s is not a loopback TCP address", ErrForbidden, ln.Addr())
	}
	s.rpc.SetPort(addr.Port)
	mux := http.NewServeMux()
	mux.Handle("/rpc", s)
	hs := s.rpc.HTTPServer(mux)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.httpSrv = hs
	s.mu.Unlock()
	// Turns a previous process acknowledged and never started run now.
	if err := s.hosts.ResumeQueued(s.ctx); err != nil {
		s.log.Warn("start queued turns", "err", err)
	}
	err := hs.Serve(wsrpc.Listener(ln))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP checks and upgrades a request to /rpc, then serves the
// connection until it ends.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.rpc.Admit(w, r) {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "sidecar shutting down", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	wc, err := s.rpc.Accept(w, r)
	if err != nil {
		s.log.Info("upgrade failed", "err", err)
		return
	}
	c := newConn(s, wc)
	if !s.addConn(c) {
		c.Close(wsrpc.StatusGoingAway, "sidecar shutting down")
		c.Serve() // flushes nothing, closes the socket, ends
		return
	}
	defer s.removeConn(c)
	c.Serve()
}

func (s *Server) addConn(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Port is the port Serve listens on (0 before Serve).
func (s *Server) Port() int { return s.rpc.Port() }

// requestShutdown runs Options.OnShutdown once.
func (s *Server) requestShutdown() {
	s.shutdownOnce.Do(func() {
		if s.opts.OnShutdown != nil {
			s.opts.OnShutdown()
		}
	})
}

// Close stops the server: no new connection is accepted, running turns are
// interrupted and persisted, connections are closed, engines are closed
// (which kills their shell tasks). It waits for every goroutine the server
// started, or until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cancelBG() // background work first: nothing below waits on it
	hs := s.httpSrv
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	hosts := s.hosts.Shut()

	var errs []error
	if hs != nil {
		if err := hs.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close http: %w", err))
		}
	}
	for _, h := range hosts {
		h.InterruptAll()
	}
	for _, c := range conns {
		c.Close(wsrpc.StatusGoingAway, "sidecar shutting down")
	}
	// Runners end once their interrupted turns are recorded.
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("close: waiting for turns: %w", ctx.Err()))
	}
	for _, h := range hosts {
		if err := h.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.closeAllWatchers(); err != nil {
		errs = append(errs, err)
	}
	if err := s.closeAllMCP(); err != nil { // kills the MCP servers' processes
		errs = append(errs, err)
	}
	if err := s.closeAllSessionMCP(); err != nil {
		errs = append(errs, err)
	}
	s.cancel()
	return errors.Join(errs...)
}

// host returns the session's host (backend), creating it on first use.
func (s *Server) host(ctx context.Context, id string) (*backend.Session, error) {
	return s.hosts.Session(ctx, id)
}

// loadedHost returns the host of a session if it exists in this process.
func (s *Server) loadedHost(id string) *backend.Session { return s.hosts.Loaded(id) }

// unloadIdle releases the idle engines of a project's sessions.
func (s *Server) unloadIdle(projectID string) { s.hosts.UnloadIdle(projectID) }

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
