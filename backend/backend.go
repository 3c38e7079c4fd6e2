package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/terminal"
)

// DefaultSubscriberBuffer bounds a subscription's buffer of live events
// when Options.SubscriberBuffer is not set.
const DefaultSubscriberBuffer = 16384

// Options configure a Backend.
type Options struct {
	// Store is the open database (required). The backend does not close it.
	Store *store.Store
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
	// Logger receives the backend's logs. Nil: slog.Default.
	Logger *slog.Logger
	// SubscriberBuffer bounds each subscription's buffer of live events; a
	// subscriber whose buffer fills is dropped.
	SubscriberBuffer int
	// SystemLocale returns the OS locale tag, asked once when a session
	// needs the default language and the shell named none. Nil:
	// oslocale.Get.
	SystemLocale func() string
	// SendQueueBytes is the transport's bound of a client's queue, in
	// bytes: a terminal.output frame carries at most an eighth of it (0: the
	// smallest frames).
	SendQueueBytes int
	// Broadcast, when set, sends a notification to every client without
	// waiting (mcp.status, mcp.changed); the transport never blocks on a
	// slow client for it.
	Broadcast func(method string, params any)
	// Envelope is the transport's frame around a notification's params
	// (required): the backend encodes the params of its streams
	// (session.event, terminal.*), the front door owns the envelope (ipc:
	// wsrpc.NotificationEnvelope).
	Envelope func(method string) (head, tail []byte)
	// IsConfigError reports whether an error that kept a turn from starting
	// is a configuration problem (its error event says errorType "config"):
	// the front door's error mapping decides. Nil: none is.
	IsConfigError func(error) bool
	// ReleaseMemory, when set, returns the transport's idle buffers to the
	// OS (after a turn that carried large attachments).
	ReleaseMemory func()
}

// Backend is the sidecar's state and policy, behind every front door: see
// the package doc. Create it with New, stop it with Shut and Close.
type Backend struct {
	opts Options
	log  *slog.Logger

	ctx    context.Context // the backend's lifetime; turns run under it
	cancel context.CancelFunc
	// bg is the context of background work no client waits for (session
	// naming): Shut cancels it first, so shutdown never waits on it.
	bg       context.Context
	cancelBG context.CancelFunc
	wg       sync.WaitGroup // session runners, naming
	hosts    *Sessions      // the sessions of this process

	providers *providerSource
	models    modelsCache // models.list answers, per provider profile
	prices    priceBook   // each profile's price table (prices.go)

	mu           sync.Mutex // guards openProjects, closed
	openProjects map[string]struct{}
	closed       bool

	mcp  mcpProjects // MCP managers of the open projects (mcp_project.go)
	smcp sessionMCPs // MCP servers of one session, from a client (mcp_session.go)

	termSubs   termRegistry    // terminal subscriptions per client (terminal_stream.go)
	watchers   projectWatchers // file watchers of the projects' ConflictGuards (watch_project.go)
	fileIdx    fileIndexes     // files.search's index per project (files_search.go)
	search     searchCache     // the web_search backend (websearch.go)
	termOutput envelope        // of terminal.output
	lang       langState       // the shell's and the OS's locale (lang.go)
}

// New returns a backend over an open store. It first settles what a dead
// process left in the store (RecoverInterrupted: a turn that waited for
// answers is suspended, one that ran gets its turn_end); the turns it
// left queued run at Start.
func New(opts Options) (*Backend, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("new backend: %w: store is required", ErrConfig)
	}
	if opts.Envelope == nil {
		return nil, fmt.Errorf("new backend: %w: envelope is required", ErrConfig)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SubscriberBuffer <= 0 {
		opts.SubscriberBuffer = DefaultSubscriberBuffer
	}
	if opts.KeyringService == "" {
		opts.KeyringService = "zqagent"
	}
	if opts.Broadcast == nil {
		opts.Broadcast = func(string, any) {}
	}
	if opts.ReleaseMemory == nil {
		opts.ReleaseMemory = func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Backend{
		opts:         opts,
		log:          opts.Logger,
		ctx:          ctx,
		cancel:       cancel,
		openProjects: map[string]struct{}{},
		lang:         newLangState(opts.SystemLocale),
	}
	ids, err := RecoverInterrupted(ctx, opts.Store, b.langOf)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("new backend: %w", err)
	}
	if len(ids) > 0 {
		opts.Logger.Info("sessions interrupted by the last exit", "sessions", ids)
	}
	if err := ReportInterruptedRewinds(ctx, opts.Store, b.langOf, opts.Logger); err != nil {
		cancel()
		return nil, fmt.Errorf("new backend: %w", err)
	}
	b.bg, b.cancelBG = context.WithCancel(ctx)
	b.termOutput = newEnvelope(opts.Envelope, "terminal.output")
	b.providers = newProviderSource(opts)
	b.hosts = NewSessions(Config{
		Store:            opts.Store,
		Logger:           opts.Logger,
		Context:          ctx,
		Background:       b.bg,
		WaitGroup:        &b.wg,
		SubscriberBuffer: opts.SubscriberBuffer,
		Engines:          engines{b},
		ApprovalTimeout:  func(ss store.Session) time.Duration { return msDuration(sessionSettings(ss).ApprovalTimeoutMS) },
		IsConfigError:    opts.IsConfigError,
		Lang:             b.langOf,
		Closing:          b.isClosing,
		Envelope:         opts.Envelope,
	})
	return b, nil
}

// Start runs the turns a previous process acknowledged and never started
// (the store's durable queue). The server calls it once it serves.
func (b *Backend) Start() {
	if err := b.hosts.ResumeQueued(b.ctx); err != nil {
		b.log.Warn("start queued turns", "err", err)
	}
}

// Shut refuses new sessions and turns from now on, cancels background
// work and interrupts the running turns (a turn waiting for an answer is
// suspended, resumable after a restart); Close then waits for them.
func (b *Backend) Shut() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	b.cancelBG() // background work first: nothing below waits on it
	for _, h := range b.hosts.Shut() {
		h.InterruptAll()
	}
}

// Close shuts the backend (Shut) and waits, until ctx ends, for the turns
// to be recorded; then it closes the engines (which kills their shell
// tasks), the watchers and the MCP servers.
func (b *Backend) Close(ctx context.Context) error {
	b.Shut()
	var errs []error
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("close: waiting for turns: %w", ctx.Err()))
	}
	for _, h := range b.hosts.All() {
		if err := h.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.closeAllFileIndexes(); err != nil { // they listen to the watchers
		errs = append(errs, err)
	}
	if err := b.closeAllWatchers(); err != nil {
		errs = append(errs, err)
	}
	if err := b.closeAllMCP(); err != nil { // kills the MCP servers' processes
		errs = append(errs, err)
	}
	if err := b.closeAllSessionMCP(); err != nil {
		errs = append(errs, err)
	}
	b.cancel()
	return errors.Join(errs...)
}

// host returns the session's host, creating it on first use.
func (b *Backend) host(ctx context.Context, id string) (*Session, error) {
	return b.hosts.Session(ctx, id)
}

// loadedHost returns the host of a session if it exists in this process.
func (b *Backend) loadedHost(id string) *Session { return b.hosts.Loaded(id) }

// unloadIdle releases the idle engines of a project's sessions.
func (b *Backend) unloadIdle(projectID string) { b.hosts.UnloadIdle(projectID) }

func (b *Backend) isClosing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// InterruptSessions interrupts the running turns of the sessions (a client
// that asked initialize's interruptOnDisconnect went away).
func (b *Backend) InterruptSessions(ids []string) {
	for _, id := range ids {
		if h := b.loadedHost(id); h != nil {
			h.InterruptAll()
		}
	}
}

// SetShellLocale sets the locale the shell named at initialize (the
// default language of sessions that name none).
func (b *Backend) SetShellLocale(tag string) error {
	if err := validLocale(tag); err != nil {
		return err
	}
	b.setShellLocale(tag)
	return nil
}

// DefaultLang is the language of sessions that name none.
func (b *Backend) DefaultLang() string { return b.defaultLang() }

// DescribeProvider says which model provider answers and, for the demo
// provider, the notice to show (initialize's capabilities).
func (b *Backend) DescribeProvider(ctx context.Context) (kind, notice string) {
	return b.providers.describe(ctx, b.defaultLang())
}

// HasTerminals reports whether this backend has a PTY manager.
func (b *Backend) HasTerminals() bool { return b.opts.Terminals != nil }

// DropClient releases what the client held (the MCP servers it gave
// sessions live as long as it); the transport calls it once the client's
// connection ended.
func (b *Backend) DropClient(c Client) { b.dropSessionMCPs(c) }
