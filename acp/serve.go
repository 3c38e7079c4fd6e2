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
)

// closeTimeout bounds the hosted server's graceful close.
const closeTimeout = 10 * time.Second

// Endpoint is a running sidecar's WebSocket address and token.
type Endpoint struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// Options configure Serve.
type Options struct {
	// Server configures the hosted ipc.Server (Store, Keyring, DataDir,
	// Terminals, …); Serve sets its Token and OnEngine. Ignored with Join.
	Server ipc.Options
	// Listener, when set, is the loopback listener the hosted server
	// serves (the caller may have published its address, with
	// Server.PeerToken, for other front doors); nil: a fresh 127.0.0.1 port.
	// Serve closes it.
	Listener net.Listener
	// Join, when set, is the endpoint of the sidecar that owns the data
	// dir: Serve drives it instead of hosting a server. The editor's fs/*
	// methods are not used then (the engines run in that process).
	Join *Endpoint
	// Version is reported in initialize's agentInfo.
	Version string
	// Logger receives the logs (stderr: stdout is the protocol). Nil:
	// slog.Default.
	Logger *slog.Logger
}

// Serve speaks ACP on in/out until the editor closes in, ctx ends, or the
// joined sidecar goes away. Everything it started has stopped when it
// returns.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	a := &Agent{log: log, version: opts.Version, ctx: actx, wg: &wg, sessions: map[string]*session{}, hosted: opts.Join == nil}

	ep := opts.Join
	if ep == nil {
		var srvWG sync.WaitGroup // the server's Serve; it returns after Close
		srv, hostEP, err := host(opts.Server, opts.Listener, a, &srvWG)
		if err != nil {
			return err
		}
		ep = hostEP
		// Deferred before the client's Close: runs after it.
		defer func() {
			cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
			defer ccancel()
			if err := srv.Close(cctx); err != nil {
				log.Warn("acp: close server", "err", err)
			}
			srvWG.Wait()
		}()
	}
	rpc, err := client.Dial(actx, ep.URL, ep.Token, nil)
	if err != nil {
		return fmt.Errorf("acp: connect to the sidecar: %w", err)
	}
	defer rpc.Close()
	if _, err := rpc.Initialize(actx, "zqagent-acp", opts.Version, true); err != nil {
		return fmt.Errorf("acp: initialize: %w", err)
	}
	a.rpc = rpc
	conn := sdk.NewAgentSideConnection(a, out, in)
	conn.SetLogger(log)
	a.conn = conn
	wg.Go(func() { a.dispatch(actx) })

	var runErr error
	select {
	case <-conn.Done():
		log.Info("acp: the editor closed the connection")
	case <-ctx.Done():
		log.Info("acp: stopping")
	case <-rpc.Done():
		runErr = fmt.Errorf("acp: the sidecar connection ended: %w", rpc.Err())
	}
	cancel() // ends the dispatcher and the questions to the editor
	wg.Wait()
	return runErr // then the client closes, then the hosted server
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
func (a *Agent) dispatch(ctx context.Context) {
	notes := a.rpc.Notifications()
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
			var ev client.Event
			if err := json.Unmarshal(n.Params, &ev); err != nil {
				a.log.Warn("acp: bad session.event", "err", err)
				continue
			}
			if s := a.lookup(ev.SessionID); s != nil {
				a.handle(ctx, s, ev)
			}
		case "session.dropped":
			var d client.Dropped
			if err := json.Unmarshal(n.Params, &d); err != nil {
				continue
			}
			if s := a.lookup(d.SessionID); s != nil {
				// Subscribe again from the last seq handled; not on this
				// goroutine, which must keep reading.
				a.wg.Go(func() { a.resubscribe(s) })
			}
		}
	}
}

func (a *Agent) resubscribe(s *session) {
	s.mu.Lock()
	after := s.seen
	s.mu.Unlock()
	if _, err := a.rpc.Subscribe(a.ctx, s.id, after); err != nil && !errors.Is(err, context.Canceled) {
		a.log.Warn("acp: subscribe again", "session", s.id, "err", err)
	}
}
