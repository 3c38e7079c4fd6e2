package ipc

import (
	"context"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

// sessionRoutes: session.* (the backend's session_methods.go,
// session_list.go, session_runtime.go, lang.go, grant_methods.go, fork.go,
// rewind.go and export.go).
func sessionRoutes() map[string]handler {
	return map[string]handler{
		"session.create":         call((*backend.Backend).CreateSession),
		"session.list":           call((*backend.Backend).ListSessions),
		"session.get":            call((*backend.Backend).SessionView),
		"session.delete":         call((*backend.Backend).DeleteSession),
		"session.rename":         call((*backend.Backend).RenameSession),
		"session.subscribe":      route(sessionSubscribe),
		"session.unsubscribe":    route(sessionUnsubscribe),
		"session.setMode":        call((*backend.Backend).SetMode),
		"session.setModel":       call((*backend.Backend).SetModel),
		"session.setAgent":       call((*backend.Backend).SetAgent),
		"session.setPermissions": call((*backend.Backend).SetPermissions),
		"session.setLang":        call((*backend.Backend).SetLang),
		"session.grants":         call((*backend.Backend).Grants),
		"session.revokeGrant":    call((*backend.Backend).RevokeGrant),
		"session.archive":        call((*backend.Backend).ArchiveSession),
		"session.unarchive":      call((*backend.Backend).UnarchiveSession),
		"session.fork":           call((*backend.Backend).ForkSession),
		"session.rewind":         call((*backend.Backend).SessionRewind),
		"session.export":         call((*backend.Backend).ExportSession),
		"session.import":         call((*backend.Backend).ImportSession),
	}
}

// sessionSubscribe fences the connection's old subscription of the session
// before it answers: what the old one queued reaches the client before the
// answer, so the new stream starts after it (no seq twice, none skipped).
// Fence and install are one step under c.subMu, so a concurrent subscribe
// of this connection fences this one. The new pump sends nothing before
// the answer is queued (MarkReady).
func sessionSubscribe(ctx context.Context, b *backend.Backend, c *conn, p protocol.SessionSubscribeParams) (wsrpc.FollowUp, error) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	sub, res, err := b.Subscribe(ctx, c.Conn, c.presence(), p, func() (int64, error) { return c.fenceSub(ctx, p.SessionID) })
	if err != nil {
		return wsrpc.FollowUp{}, err
	}
	c.setSub(sub)
	return wsrpc.FollowUp{Result: res, After: sub.MarkReady}, nil
}

func sessionUnsubscribe(ctx context.Context, _ *backend.Backend, c *conn, p protocol.SessionIDParams) (protocol.UnsubscribeResult, error) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	sent, err := c.fenceSub(ctx, p.SessionID)
	if err != nil {
		return protocol.UnsubscribeResult{}, err
	}
	return protocol.UnsubscribeResult{Unsubscribed: sent >= 0}, nil
}
