package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/ipc/host"
)

// grantRoutes serves the session's always_tool and always_command grants.
// While the session's engine is loaded its permission engine owns them (the
// store is its copy, saved on every change); otherwise the store does. The
// host's loadMu keeps a revocation and an engine load from interleaving.
func (s *Server) grantRoutes() map[string]handler {
	return map[string]handler{
		"session.grants":      s.sessionGrants,
		"session.revokeGrant": s.sessionRevokeGrant,
	}
}

// GrantInfo is one session grant on the wire.
type GrantInfo struct {
	Kind string `json:"kind"` // "tool" or "command"
	Name string `json:"name"` // the tool, or the executable
	// GrantedAt is when the user gave it; null for a grant saved before
	// the sidecar kept times.
	GrantedAt *time.Time `json:"grantedAt"`
}

// GrantsParams are the params of session.grants.
type GrantsParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
}

// GrantsResult is the result of session.grants.
type GrantsResult struct {
	Grants []GrantInfo `json:"grants"`
}

// RevokeGrantParams are the params of session.revokeGrant.
type RevokeGrantParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Kind      string `json:"kind" rpc:"required"`
	Name      string `json:"name" rpc:"required"`
}

// RevokeGrantResult is the result of session.revokeGrant.
type RevokeGrantResult struct {
	Revoked bool `json:"revoked"`
}

func grantInfos(gs []permission.SessionGrant) []GrantInfo {
	out := make([]GrantInfo, 0, len(gs))
	for _, g := range gs {
		gi := GrantInfo{Kind: string(g.Kind), Name: g.Name}
		if !g.GrantedAt.IsZero() {
			at := g.GrantedAt.UTC()
			gi.GrantedAt = &at
		}
		out = append(out, gi)
	}
	return out
}

func (s *Server) sessionGrants(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p GrantsParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	h.LockLoad()
	defer h.UnlockLoad()
	if eng := h.Loaded(); eng != nil {
		return GrantsResult{Grants: grantInfos(eng.Permissions().SessionGrants())}, nil
	}
	g, err := s.opts.Store.Grants(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return GrantsResult{Grants: grantInfos(host.SessionGrantsOf(g))}, nil
}

func (s *Server) sessionRevokeGrant(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p RevokeGrantParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	kind := permission.GrantKind(p.Kind)
	if kind != permission.GrantTool && kind != permission.GrantCommand {
		return nil, invalidField("kind", `must be "tool" or "command"`)
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	h.LockLoad()
	defer h.UnlockLoad()
	notHeld := fmt.Errorf("%w: session %q holds no %s grant %q", ErrNotFound, p.SessionID, p.Kind, p.Name)
	if eng := h.Loaded(); eng != nil {
		if !eng.Permissions().RevokeGrant(kind, p.Name) {
			return nil, notHeld
		}
		if err := h.SaveGrants(ctx, eng); err != nil {
			return nil, err
		}
		return RevokeGrantResult{Revoked: true}, nil
	}
	g, err := s.opts.Store.Grants(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	list, times := &g.SessionTools, g.GrantTimes.Tools
	if kind == permission.GrantCommand {
		list, times = &g.SessionCommands, g.GrantTimes.Commands
	}
	i := slices.Index(*list, p.Name)
	if i < 0 {
		return nil, notHeld
	}
	*list = slices.Delete(*list, i, i+1)
	delete(times, p.Name)
	if err := s.opts.Store.SaveGrants(ctx, p.SessionID, g); err != nil {
		return nil, err
	}
	return RevokeGrantResult{Revoked: true}, nil
}
