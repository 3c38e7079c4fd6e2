package backend

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/store"
)

// Config is what the host needs from the server that composes it.
type Config struct {
	// Store is the open database (required).
	Store *store.Store
	// Logger receives the host's logs.
	Logger *slog.Logger
	// Context is the server's lifetime: turns run under it.
	Context context.Context
	// Background is the context of work no client waits for (naming); the
	// server cancels it first when it closes.
	Background context.Context
	// WaitGroup tracks the runners and the naming goroutines; the server
	// waits for it when it closes.
	WaitGroup *sync.WaitGroup
	// SubscriberBuffer bounds each subscription's buffer of live events; a
	// subscriber whose buffer fills is dropped.
	SubscriberBuffer int
	// Engines builds the sessions' engines.
	Engines Engines
	// ApprovalTimeout is a session's approval timeout (0: none), from its
	// row.
	ApprovalTimeout func(store.Session) time.Duration
	// IsConfigError reports whether an error that kept a turn from starting
	// is a configuration problem (its error event says errorType "config").
	IsConfigError func(error) bool
	// Lang is a session's language (engine.PromptLangs), for the texts for
	// people of the events the host records itself (nil: the engine's
	// default).
	Lang func(sessionID string) string
	// Envelope is the transport's frame around a notification's params
	// (required; e.g. wsrpc.NotificationEnvelope).
	Envelope func(method string) (head, tail []byte)
	// Closing reports whether the server is shutting down: a turn waiting
	// for an answer is then suspended (resumable after a restart) instead
	// of interrupted.
	Closing func() bool
}

// Engines builds a session's engine; the host calls it when a turn needs
// the engine (lazily, at most one load at a time per session).
type Engines interface {
	// Build builds the session's engine from the store, composing hooks
	// (the host's) after its own.
	Build(ctx context.Context, h *Session, hooks []engine.Hook) (*engine.Engine, error)
	// Attach runs once the host restored the session's grants and set its
	// bridge as approver, before any turn runs on the engine. It must not
	// block.
	Attach(h *Session, eng *engine.Engine)
}

// Sink is a subscriber's connection, to which a subscription queues its
// frames (the transport's connection satisfies it).
type Sink interface {
	// Context ends when the connection ends.
	Context() context.Context
	// Log is the connection's logger.
	Log() *slog.Logger
	// EnqueueUntil queues a frame, waiting for room until ctx (derived from
	// Context) ends.
	EnqueueUntil(ctx context.Context, frame []byte) bool
	// Notify queues a notification, waiting for room.
	Notify(method string, params any) bool
}

// Sessions is the set of sessions hosted in this process. Create it with
// New.
type Sessions struct {
	opts Config
	log  *slog.Logger
	ctx  context.Context
	bg   context.Context
	wg   *sync.WaitGroup

	event envelope // of session.event

	mu       sync.Mutex // guards sessions, closed
	sessions map[string]*Session
	closed   bool
}

// NewSessions returns an empty set of sessions.
func NewSessions(opts Config) *Sessions {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ApprovalTimeout == nil {
		opts.ApprovalTimeout = func(store.Session) time.Duration { return 0 }
	}
	if opts.IsConfigError == nil {
		opts.IsConfigError = func(error) bool { return false }
	}
	if opts.Lang == nil {
		opts.Lang = func(string) string { return "" }
	}
	if opts.Closing == nil {
		opts.Closing = func() bool { return false }
	}
	return &Sessions{
		opts:     opts,
		log:      opts.Logger,
		ctx:      opts.Context,
		bg:       opts.Background,
		wg:       opts.WaitGroup,
		sessions: map[string]*Session{},
		event:    newEnvelope(opts.Envelope, "session.event"),
	}
}

// All returns the sessions hosted now.
func (s *Sessions) All() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for _, h := range s.sessions {
		out = append(out, h)
	}
	return out
}

// Shut refuses new sessions from now on and returns the hosted ones (the
// server interrupts and closes them).
func (s *Sessions) Shut() []*Session {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.All()
}

// Forget removes a session (deleted; its turn ended) from the set.
func (s *Sessions) Forget(id string) {
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
}

func (s *Sessions) isClosing() bool { return s.opts.Closing() }

// eventFrame is the session.event frame of a committed event, encoded once
// for every subscriber: the transport's envelope around its params.
func (s *Sessions) eventFrame(ev store.Event) []byte {
	return s.event.frame(len(ev.Data)+len(ev.SessionID)+len(ev.TurnID)+100, func(b []byte) []byte { return appendEventParams(b, ev) })
}

// envelope is the transport's frame around the params of one method.
type envelope struct{ head, tail []byte }

func newEnvelope(f func(method string) (head, tail []byte), method string) envelope {
	head, tail := f(method)
	return envelope{head, tail}
}

// frame builds a frame in one buffer: the head, the params appendParams
// appends (about size bytes), the tail.
func (e envelope) frame(size int, appendParams func([]byte) []byte) []byte {
	b := make([]byte, 0, len(e.head)+size+len(e.tail))
	b = append(b, e.head...)
	b = appendParams(b)
	return append(b, e.tail...)
}

// Client is a connected client the backend streams to or binds state to
// (terminal.output streams, the MCP servers a client gave a session): a
// Sink that also runs goroutines the transport tracks until it ends. A
// Client is compared by identity.
type Client interface {
	Sink
	// Go runs f on a goroutine the client's connection waits for.
	Go(f func())
}
