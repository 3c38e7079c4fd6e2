package wsrpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zqagent/sidecar/protocol"
)

// MaxFrame is the largest frame a client may send: 4 attachments of 10 MB in
// base64 plus text. A larger frame closes the connection with 1009.
const MaxFrame = 56 << 20

// MaxInFlight bounds the concurrent requests of one connection.
const MaxInFlight = 64

// StatusCode is a WebSocket close code.
type StatusCode = websocket.StatusCode

// StatusGoingAway is the close code of a server that shuts down.
const StatusGoingAway = websocket.StatusGoingAway

// Handler serves one method. ctx ends when the connection ends; params is
// the raw params member (nil when absent), which aliases the frame: it is
// valid only until the handler returns (and its FollowUp ran), so a
// handler keeps nothing of it but what it decoded (DecodeParams copies). A handler decodes params with
// DecodeParams and returns errors wrapping sentinels (this package's or the
// endpoint's ErrorCodes). A FollowUp result runs work after the answer is
// queued.
type Handler func(ctx context.Context, c *Conn, params json.RawMessage) (any, error)

// Endpoint is the /rpc endpoint: it checks upgrades (auth.go), accepts
// WebSocket connections and configures them. Its exported fields are set
// before the first request and never change after.
type Endpoint struct {
	// Token is the shared secret every upgrade must carry (required);
	// PeerToken, when set, is accepted like it.
	Token     string
	PeerToken string
	// SecurityLog, when set, gets each refused upgrade (a JSON logger on the
	// sidecar's stderr); nil: Log gets them.
	SecurityLog *slog.Logger
	// Context is the parent of every connection's context.
	Context context.Context
	// Methods is the method table (immutable).
	Methods map[string]Handler
	// Ordered are the methods a connection handles one at a time, in the
	// order they arrive, before reading its next frame (others run
	// concurrently). Their handlers must not wait on anything slow.
	Ordered map[string]bool
	// Gate, when set, is the method a connection must call first: any
	// other before it fails with CodeNotInitialized (MarkInitialized opens
	// the gate).
	Gate string
	// ErrorCodes maps the sentinels of the packages behind the handlers to
	// wire codes (after this package's own, see WireErrorOf).
	ErrorCodes []ErrCode
	// ErrorMessage, when set, gives an error's data.message (a text for
	// people) by its kind; "" leaves it out.
	ErrorMessage func(kind protocol.ErrorKind) string
	// SendQueueBytes bounds each connection's outgoing queue, in bytes.
	SendQueueBytes int
	// WriteTimeout is how long a socket may take no byte of a frame being
	// written before the connection is closed (the stall watch).
	WriteTimeout time.Duration
	// Log receives the endpoint's logs (never the token).
	Log *slog.Logger

	origins   []string // allowed origins, canonical (SetOrigins)
	port      atomic.Int32
	slotsOnce sync.Once
	frames    *frameSlots // the large-frame buffers (slots)

	releaseMu      sync.Mutex // guards lastRelease, releasePending
	lastRelease    time.Time  // when ReleaseMemory last gave memory back
	releasePending bool       // a release is scheduled (ReleaseMemory)
}

// slots are the endpoint's large-frame buffers, made on first use.
func (e *Endpoint) slots() *frameSlots {
	e.slotsOnce.Do(func() { e.frames = newFrameSlots(LargeFrameSlots) })
	return e.frames
}

// SetPort records the port the endpoint listens on (the Host check needs it).
func (e *Endpoint) SetPort(port int) { e.port.Store(int32(port)) }

// Port is the port set by SetPort (0 before).
func (e *Endpoint) Port() int { return int(e.port.Load()) }

// Listener wraps ln so that each connection counts what its socket accepted
// (the stall watch); serve it with an HTTPServer of the endpoint.
func Listener(ln net.Listener) net.Listener { return progressListener{ln} }

// HTTPServer returns the HTTP server that serves h on a Listener.
func (e *Endpoint) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(e.Log.Handler(), slog.LevelDebug),
		// Each connection counts what its socket accepted (the stall watch).
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if pc, ok := c.(*progressConn); ok {
				return context.WithValue(ctx, progressKey{}, pc)
			}
			return ctx
		},
	}
}

// Admit checks an upgrade request (SPEC §4: loopback Host, Origin
// allowlist, token). A refused request is answered (401 or 403) and logged
// without the token; Admit then returns false.
func (e *Endpoint) Admit(w http.ResponseWriter, r *http.Request) bool {
	status, reason := e.checkUpgrade(r)
	if status == 0 {
		return true
	}
	e.refusal(r, status, reason)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="zqagent"`)
	}
	http.Error(w, http.StatusText(status)+": "+reason, status)
	return false
}

// Accept upgrades an admitted request. The connection does nothing until
// Serve.
func (e *Endpoint) Accept(w http.ResponseWriter, r *http.Request) (*Conn, error) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// Host, Origin and token were checked by Admit, with our own rules.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(MaxFrame)
	c := newConn(e, ws)
	if pc := progressConnFrom(r.Context()); pc != nil {
		progress := c.watch.progress
		pc.onProgress.Store(&progress)
		c.unwatch = func() { pc.onProgress.Store(nil) }
	}
	return c, nil
}

// ReleaseMemory gives freed heap back to the OS after work that left much
// garbage (a large frame handled, a model request that carried stored
// attachments). It runs a GC, so it runs at most once a second across the
// endpoint: a call within a second of the last release schedules one at
// the end of that second (a timer that only calls debug.FreeOSMemory),
// so the memory of the last of many frames comes back too.
func (e *Endpoint) ReleaseMemory() {
	e.releaseMu.Lock()
	defer e.releaseMu.Unlock()
	if e.releasePending {
		return
	}
	wait := time.Second - time.Since(e.lastRelease)
	if wait <= 0 {
		e.lastRelease = time.Now()
		debug.FreeOSMemory()
		return
	}
	e.releasePending = true
	time.AfterFunc(wait, func() {
		e.releaseMu.Lock()
		e.releasePending = false
		e.lastRelease = time.Now()
		e.releaseMu.Unlock()
		debug.FreeOSMemory()
	})
}
