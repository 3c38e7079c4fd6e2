package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/ipc"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// closeTimeout bounds the hosted server's graceful close.
const closeTimeout = 10 * time.Second

// Endpoint is a running sidecar's WebSocket address and token.
type Endpoint struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// Backend is what Serve drives for a while: the sidecar that owns the data
// dir (Join), or the parts to host one in this process (Server, Listener).
type Backend struct {
	// Join, when set, is the endpoint of the sidecar that owns the data
	// dir: Serve drives it instead of hosting a server. The editor's fs/*
	// methods are not used then (the engines run in that process).
	Join *Endpoint
	// Server configures the hosted ipc.Server (Store, Keyring, DataDir,
	// Terminals, …); Serve sets its Token, OnEngine and OnShutdown.
	// Ignored with Join.
	Server ipc.Options
	// Listener, when set, is the loopback listener the hosted server
	// serves (the caller may have published its address, with
	// Server.PeerToken, for other front doors); nil: a fresh 127.0.0.1 port.
	// Serve closes it.
	Listener net.Listener
	// Release, when set, runs once Serve is done with the backend: after the
	// hosted server closed (the caller closes the store and gives the data
	// dir's lock up there), or after the joined sidecar's connection ended.
	Release func()
}

// Options configure Serve.
type Options struct {
	// Server, Listener and Join are the one Backend of a Serve without
	// Connect.
	Server   ipc.Options
	Listener net.Listener
	Join     *Endpoint
	// Connect, when set, gives the backend to drive: at start, again when
	// the joined sidecar went away (the caller takes the data dir over or
	// joins whoever did), and again after this process handed its hosted
	// server over (handover true: a sidecar asked this one to let the data
	// dir go with the shutdown method; the caller waits for the new owner).
	// The sessions of the editor stay open across the change: Serve
	// subscribes to them again where it left off, and their pending
	// questions stay answerable (they are in the store).
	Connect func(ctx context.Context, handover bool) (Backend, error)
	// Locale is the language tag of new sessions that name none in
	// session/new's _meta (the OS locale of the editor's user); "": the
	// owner's default.
	Locale string
	// Version is reported in initialize's agentInfo.
	Version string
	// Logger receives the logs (stderr: stdout is the protocol). Nil:
	// slog.Default.
	Logger *slog.Logger
}

// reconnectTimeout bounds the search for a new backend after the old one
// went away.
const reconnectTimeout = 30 * time.Second

// Serve speaks ACP on in/out until the editor closes in or ctx ends.
// Everything it started has stopped when it returns.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	connect := opts.Connect
	if connect == nil {
		one := Backend{Join: opts.Join, Server: opts.Server, Listener: opts.Listener}
		used := false
		connect = func(context.Context, bool) (Backend, error) {
			if used {
				return Backend{}, errors.New("the sidecar went away")
			}
			used = true
			return one, nil
		}
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	a := &Agent{log: log, version: opts.Version, locale: opts.Locale, ctx: actx, wg: &wg, sessions: map[string]*session{}, changed: make(chan struct{})}
	conn := sdk.NewAgentSideConnection(a, out, in)
	conn.SetLogger(log)
	a.conn = conn
	defer wg.Wait()
	defer cancel() // ends the dispatcher and the questions to the editor

	handover := false
	first := true
	for {
		b, err := connect(actx, handover)
		if err != nil {
			a.setClient(nil, nil)
			return err
		}
		r, err := a.run(actx, b, first, conn.Done())
		first = false
		if err != nil || r == endEditor {
			return err
		}
		handover = r == endHandover
	}
}

// Why run returned.
type runEnd int

const (
	endEditor   runEnd = iota // the editor closed the connection, or ctx ended
	endGone                   // the joined sidecar went away
	endHandover               // this process's server was asked to let go
)

// run drives one backend until the editor goes, the backend goes, or a
// handover is asked; it has closed the backend when it returns.
func (a *Agent) run(ctx context.Context, b Backend, first bool, editorDone <-chan struct{}) (runEnd, error) {
	if b.Release != nil {
		defer b.Release()
	}
	ep := b.Join
	handover := make(chan struct{})
	var stopSrv func()
	if ep == nil {
		var srvWG sync.WaitGroup // the server's Serve; it returns after Close
		var asked sync.Once
		b.Server.OnShutdown = func() { asked.Do(func() { close(handover) }) }
		srv, hostEP, err := host(b.Server, b.Listener, a, &srvWG)
		if err != nil {
			return endEditor, err
		}
		ep = hostEP
		// The server closes before this process's client: a turn that
		// waits for an answer is then suspended, answerable on the next
		// owner, rather than interrupted by the client's disconnect.
		var once sync.Once
		stopSrv = func() {
			once.Do(func() {
				cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
				defer ccancel()
				if err := srv.Close(cctx); err != nil {
					a.log.Warn("acp: close server", "err", err)
				}
				srvWG.Wait()
			})
		}
		defer stopSrv() // when the client was not made
	}
	rpc, methods, err := a.dial(ctx, *ep)
	if err != nil {
		if b.Join != nil && !first {
			a.log.Info("acp: the owner is not reachable; looking again", "err", err)
			return endGone, nil
		}
		return endEditor, err
	}
	defer rpc.Close()
	if stopSrv != nil {
		defer stopSrv()
	}
	var dwg sync.WaitGroup
	dctx, dcancel := context.WithCancel(ctx)
	dwg.Go(func() { a.dispatch(dctx, rpc) })
	defer dwg.Wait()
	defer dcancel()
	a.setClient(rpc, methods)
	if !first {
		a.resubscribeAll(ctx, rpc)
	}

	select {
	case <-editorDone:
		a.log.Info("acp: the editor closed the connection")
		return endEditor, nil
	case <-ctx.Done():
		a.log.Info("acp: stopping")
		return endEditor, nil
	case <-handover:
		a.log.Info("acp: another sidecar asked for the data dir; handing it over")
		return endHandover, nil
	case <-rpc.Done():
		a.log.Info("acp: the sidecar that owns the data dir went away; taking over", "err", rpc.Err())
		return endGone, nil
	}
}

// dial connects to the sidecar at ep and initializes the connection; it
// returns the methods the sidecar routes.
func (a *Agent) dial(ctx context.Context, ep Endpoint) (*client.Client, map[string]bool, error) {
	rpc, err := client.Dial(ctx, ep.URL, ep.Token, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("acp: connect to the sidecar: %w", err)
	}
	raw, err := rpc.Initialize(ctx, "zqagent-acp", a.version, true)
	if err != nil {
		rpc.Close()
		return nil, nil, fmt.Errorf("acp: initialize: %w", err)
	}
	var res protocol.InitializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		rpc.Close()
		return nil, nil, fmt.Errorf("acp: initialize: %w", err)
	}
	methods := make(map[string]bool, len(res.Capabilities.Methods))
	for _, m := range res.Capabilities.Methods {
		methods[m] = true
	}
	return rpc, methods, nil
}

// host starts an ipc.Server on ln (nil: a private loopback port) with a
// fresh token of its own.
func host(o ipc.Options, ln net.Listener, a *Agent, wg *sync.WaitGroup) (*ipc.Server, *Endpoint, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, nil, err
	}
	o.Token = hex.EncodeToString(b)
	o.OnEngine = a.routeFileTools
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, nil, fmt.Errorf("acp: listen: %w", err)
		}
	}
	srv, err := ipc.New(o)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil {
			a.log.Error("acp: serve", "err", err)
		}
	})
	url := fmt.Sprintf("ws://%s/rpc", ln.Addr())
	return srv, &Endpoint{URL: url, Token: o.Token}, nil
}

// dispatch hands each session event to its session, in order, until ctx
// ends or the connection closes.
func (a *Agent) dispatch(ctx context.Context, rpc *client.Client) {
	notes := rpc.Notifications()
	for {
		var n client.Notification
		var ok bool
		select {
		case n, ok = <-notes:
			if !ok {
				return
			}
		case <-ctx.Done():
			return
		}
		switch n.Method {
		case "session.event":
			var ev protocol.SessionEvent
			if err := json.Unmarshal(n.Params, &ev); err != nil {
				a.log.Warn("acp: bad session.event", "err", err)
				continue
			}
			if s := a.lookup(ev.SessionID); s != nil {
				a.handle(ctx, s, ev)
			}
		case "session.dropped":
			var d protocol.SessionDropped
			if err := json.Unmarshal(n.Params, &d); err != nil {
				continue
			}
			if s := a.lookup(d.SessionID); s != nil {
				// Subscribe again from the last seq handled; not on this
				// goroutine, which must keep reading.
				a.wg.Go(func() { a.resubscribe(rpc, s) })
			}
		}
	}
}

func (a *Agent) resubscribe(rpc *client.Client, s *session) {
	s.mu.Lock()
	after := s.seen
	s.mu.Unlock()
	if _, err := rpc.Subscribe(a.ctx, s.id, after); err != nil && !errors.Is(err, context.Canceled) {
		a.log.Warn("acp: subscribe again", "session", s.id, "err", err)
	}
}

// resubscribeAll subscribes the editor's sessions on a new backend from
// the last event each handled. Questions already put to the editor stay
// open (their answer goes to the new backend: the requests are in the
// store); newer ones come as live events.
func (a *Agent) resubscribeAll(ctx context.Context, rpc *client.Client) {
	a.mu.Lock()
	ss := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.mu.Unlock()
	for _, s := range ss {
		s.mu.Lock()
		after := s.seen
		s.mu.Unlock()
		if _, err := rpc.Subscribe(ctx, s.id, after); err != nil {
			a.log.Warn("acp: subscribe on the new owner", "session", s.id, "err", err)
		}
		a.readdMCP(ctx, s)
	}
}
