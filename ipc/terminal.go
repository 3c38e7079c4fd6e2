package ipc

import (
	"context"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

// terminalRoutes: terminal.* (the backend's terminal_methods.go and
// terminal_stream.go).
func terminalRoutes() map[string]handler {
	return map[string]handler{
		"terminal.create":      call((*backend.Backend).CreateTerminal),
		"terminal.write":       call((*backend.Backend).WriteTerminal),
		"terminal.resize":      call((*backend.Backend).ResizeTerminal),
		"terminal.kill":        call((*backend.Backend).KillTerminal),
		"terminal.list":        call((*backend.Backend).Terminals),
		"terminal.subscribe":   route(terminalSubscribe),
		"terminal.unsubscribe": route(terminalUnsubscribe),
	}
}

// terminalSubscribe streams to this connection; the stream starts once the
// answer is queued.
func terminalSubscribe(ctx context.Context, b *backend.Backend, c *conn, p protocol.TerminalSubscribeParams) (wsrpc.FollowUp, error) {
	res, ready, err := b.SubscribeTerminal(ctx, c.Conn, p)
	if err != nil {
		return wsrpc.FollowUp{}, err
	}
	return wsrpc.FollowUp{Result: res, After: ready}, nil
}

func terminalUnsubscribe(ctx context.Context, b *backend.Backend, c *conn, p protocol.TerminalRef) (protocol.UnsubscribeResult, error) {
	return b.UnsubscribeTerminal(ctx, c.Conn, p)
}
