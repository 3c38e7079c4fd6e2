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
	DefaultSubscriberBuffer = backend.DefaultSubscriberBuffer
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
	rpc  *wsrpc.Endpoint  // the transport: upgrade checks, method table, connection limits
	b    *backend.Backend // the state and policy behind the methods

	ctx    context.Context // the server's lifetime
	cancel context.CancelFunc
	wg     sync.WaitGroup // connections

	shutdownOnce sync.Once

	mu      sync.Mutex // guards conns, closed, httpSrv
	conns   map[*conn]struct{}
	closed  bool
	httpSrv *http.Server
}

// New returns a server; nothing is listening yet.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("new server: %w: store is required", wsrpc.ErrConfig)
	}
	if opts.Token == "" {
		return nil, fmt.Errorf("new server: %w: token is required", wsrpc.ErrConfig)
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
		opts:   opts,
		log:    opts.Logger,
		ctx:    ctx,
		cancel: cancel,
		conns:  map[*conn]struct{}{},
	}
	b, err := backend.New(backend.Options{
		Store:            opts.Store,
		DataDir:          opts.DataDir,
		KeyringService:   opts.KeyringService,
		Terminals:        opts.Terminals,
		AuditLogDir:      opts.AuditLogDir,
		Keyring:          opts.Keyring,
		OnEngine:         opts.OnEngine,
		Provider:         opts.Provider,
		APIKey:           opts.APIKey,
		Logger:           opts.Logger,
		SubscriberBuffer: opts.SubscriberBuffer,
		SystemLocale:     opts.SystemLocale,
		SendQueueBytes:   opts.SendQueueBytes,
		Broadcast:        s.broadcast,
		Envelope:         wsrpc.NotificationEnvelope,
		IsConfigError:    func(err error) bool { return wireError(err).Code == wsrpc.CodeConfig },
		ReleaseMemory:    func() { s.rpc.ReleaseMemory() },
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("new server: %w", err)
	}
	s.b = b
	routes, err := routeTable()
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
		ErrorMessage:   func(kind protocol.ErrorKind) string { return engine.KindMessage(b.DefaultLang(), string(kind)) },
		SendQueueBytes: opts.SendQueueBytes,
		WriteTimeout:   opts.WriteTimeout,
		Log:            opts.Logger,
	}
	if opts.SecurityLog != nil {
		s.rpc.SecurityLog = slog.New(slog.NewJSONHandler(opts.SecurityLog, nil))
	}
	if err := s.rpc.SetOrigins(opts.AllowOrigins); err != nil {
		cancel()
		return nil, fmt.Errorf("new server: %w: %w", wsrpc.ErrConfig, err)
	}
	return s, nil
}

// Serve accepts connections on ln (which must be a loopback TCP listener)
// until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		return fmt.Errorf("serve: %w: listener %s is not a loopback TCP address", wsrpc.ErrForbidden, ln.Addr())
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
	s.b.Start()
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
	hs := s.httpSrv
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.b.Shut() // no new turn from here; running ones are interrupted

	var errs []error
	if hs != nil {
		if err := hs.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close http: %w", err))
		}
	}
	for _, c := range conns {
		c.Close(wsrpc.StatusGoingAway, "sidecar shutting down")
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("close: waiting for connections: %w", ctx.Err()))
	}
	// Runners end once their interrupted turns are recorded.
	if err := s.b.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	s.cancel()
	return errors.Join(errs...)
}

// broadcast sends a notification to every initialized connection; it never
// waits on a slow one.
func (s *Server) broadcast(method string, params any) {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		if c.Initialized() {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.NotifyNoWait(method, params)
	}
}
