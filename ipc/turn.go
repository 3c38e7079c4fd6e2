package ipc

import (
	"context"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/protocol"
)

// turnRoutes: turn.* and request.respond (the backend's turn_methods.go and
// request_methods.go: the turn policy). A turn this connection starts or
// resumes is noted for initialize's interruptOnDisconnect.
func turnRoutes() map[string]handler {
	return map[string]handler{
		"turn.start":      routeDecoded(decodeTurnStart, turnStart),
		"turn.interrupt":  call((*backend.Backend).Interrupt),
		"turn.retry":      route(noting((*backend.Backend).Retry)),
		"turn.resume":     route(turnResume),
		"turn.steer":      call((*backend.Backend).Steer),
		"turn.unsteer":    call((*backend.Backend).Unsteer),
		"request.respond": route(requestRespond),
	}
}

// turnStart's attachments alias the frame (decodeTurnStart copies nothing
// large); the backend saves them before it answers.
func turnStart(ctx context.Context, b *backend.Backend, c *conn, p turnStartParams) (protocol.TurnResult, error) {
	res, err := b.StartTurn(ctx, p.SessionID, p.Text, p.Attachments)
	if err == nil {
		c.noteTurn(p.SessionID)
	}
	return res, err
}

// noting notes the session of a turn the backend method queued.
func noting(m func(*backend.Backend, context.Context, protocol.SessionIDParams) (protocol.TurnResult, error)) func(context.Context, *backend.Backend, *conn, protocol.SessionIDParams) (protocol.TurnResult, error) {
	return func(ctx context.Context, b *backend.Backend, c *conn, p protocol.SessionIDParams) (protocol.TurnResult, error) {
		res, err := m(b, ctx, p)
		if err == nil {
			c.noteTurn(p.SessionID)
		}
		return res, err
	}
}

// turnResume notes the session unless an answer had already resumed the
// turn (then another connection's request runs it).
func turnResume(ctx context.Context, b *backend.Backend, c *conn, p protocol.SessionIDParams) (protocol.TurnResult, error) {
	res, queued, err := b.Resume(ctx, p)
	if queued {
		c.noteTurn(p.SessionID)
	}
	return res, err
}

func requestRespond(ctx context.Context, b *backend.Backend, c *conn, p protocol.RequestRespondParams) (protocol.RequestRespondResult, error) {
	res, err := b.Respond(ctx, p)
	if err == nil && res.Resumed {
		c.noteTurn(p.SessionID)
	}
	return res, err
}
