package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/zqagent/sidecar/proc"
)

// conn is one live connection to a server.
type conn struct {
	name   string
	client *client.Client
	cancel context.CancelFunc // ends the connection's context (SSE stream, requests)
	// child is the stdio server process; nil for other transports.
	child *child

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error

	calls  callSet     // the tool calls in flight, for elicitations (elicit.go)
	asking atomic.Bool // a server-initiated elicitation is being asked (elicit.go)
}

// dialer is what connecting needs from the manager.
type dialer struct {
	base      context.Context // lives until the manager closes
	workspace string
	builtin   BuiltinContext
	logger    *slog.Logger
	wg        *sync.WaitGroup // tracks the stdio stderr readers
	// onLost is called (at most once per conn, never after close started)
	// when the server goes away by itself.
	onLost func(c *conn, err error)
	// onToolsChanged is called when the server says its tool list changed.
	onToolsChanged func(c *conn)
	// signIns are the stored sign-ins of remote servers (oauth.go).
	signIns *signIns
}

// dial connects to a server, initializes the session and lists its tools.
// ctx bounds the whole handshake.
// cfg must be trusted; its ${VAR} references are expanded here.
func (d *dialer) dial(ctx context.Context, cfg ServerConfig) (*conn, []mcp.Tool, error) {
	cfg = expandConfig(cfg, lookupVar)
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	connCtx, cancel := context.WithCancel(d.base)
	c := &conn{name: cfg.Name, cancel: cancel}
	auth := d.authFor(ctx, cfg)
	// A handshake that outlives ctx is torn down: its streams use connCtx.
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) (*conn, []mcp.Tool, error) {
		stop()
		if c.child != nil {
			// No handshake, no graceful shutdown: end the process group now.
			_ = proc.KillGroup(c.child.pid, 0)
		}
		_ = c.close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		err = auth.classify(err)
		return nil, nil, fmt.Errorf("connect %s: %w", cfg.Name, err)
	}

	var err error
	switch cfg.Type {
	case TypeStdio:
		c.child, c.client, err = d.startStdio(connCtx, cfg, c)
	case TypeHTTP:
		var tr *transport.StreamableHTTP
		tr, err = transport.NewStreamableHTTP(cfg.URL, transport.WithHTTPHeaders(cfg.Headers), transport.WithHTTPLogger(d.logger), auth.httpOAuth())
		if err == nil {
			c.client = client.NewClient(tr, c.clientOptions(d)...)
			err = c.client.Start(connCtx)
		}
	case TypeSSE:
		c.client, err = client.NewSSEMCPClient(cfg.URL, client.WithHeaders(cfg.Headers), transport.WithSSELogger(d.logger), auth.sseOAuth())
		if err == nil {
			c.client.OnConnectionLost(func(err error) { c.lost(d, err) })
			err = c.client.Start(connCtx)
		}
	case TypeBuiltin:
		srv, berr := builtinServer(cfg.Name, d.builtin)
		if berr != nil {
			return fail(berr)
		}
		c.client, err = client.NewInProcessClient(srv)
		if err == nil {
			err = c.client.Start(connCtx)
		}
	}
	if err != nil {
		return fail(err)
	}
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationToolsListChanged && d.onToolsChanged != nil && !c.closing.Load() {
			d.onToolsChanged(c)
		}
	})

	initReq := mcp.InitializeRequest{}
	initReq.Params.ClientInfo = mcp.Implementation{Name: "zqagent-sidecar", Version: "1.0.0"}
	if _, err := c.client.Initialize(ctx, initReq); err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}
	list, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fail(fmt.Errorf("list tools: %w", err))
	}
	if !stop() {
		return fail(ctx.Err())
	}
	return c, list.Tools, nil
}

// lost reports that the server went away by itself.
func (c *conn) lost(d *dialer, err error) {
	if c.closing.Load() || d.onLost == nil {
		return
	}
	if err == nil {
		err = ErrServerDied
	} else if !errors.Is(err, ErrServerDied) {
		err = fmt.Errorf("%w: %v", ErrServerDied, err)
	}
	d.onLost(c, err)
}

// call runs one tool call.
func (c *conn) call(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	defer c.calls.track(ctx)()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	req.Params.Arguments = args
	return c.client.CallTool(ctx, req)
}

// transportGone reports whether err means the connection is dead (as
// opposed to one failed call).
func transportGone(err error) bool {
	return errors.Is(err, transport.ErrTransportClosed)
}

// transportFailed reports whether err came from the transport (network,
// process) rather than from the server's JSON-RPC answer.
func transportFailed(err error) bool {
	var te *transport.Error
	return errors.As(err, &te)
}

// alive checks the server after a transport error with a cheap request
// (the ping RPC is gone from recent protocol versions): a server that does
// not answer is gone.
func (c *conn) alive(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	return err == nil || !transportFailed(err)
}

// close ends the connection: the client (for stdio: stdin closed, a grace
// period, then signals), then whatever is left of the child's process group.
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.cancel()
		if c.client != nil {
			c.closeErr = c.client.Close()
		}
		if c.child != nil {
			c.child.stop(2 * time.Second)
		}
		if c.closeErr != nil && c.child != nil {
			// Exit statuses of a killed child are expected.
			c.closeErr = nil
		}
	})
	return c.closeErr
}
