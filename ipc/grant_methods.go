package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/store"
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

// sessionGrantsOf reads the stored grants in the permission engine's shape.
func sessionGrantsOf(g store.Grants) []permission.SessionGrant {
	out := make([]permission.SessionGrant, 0, len(g.SessionTools)+len(g.SessionCommands))
	for _, t := range g.SessionTools {
		out = append(out, permission.SessionGrant{Kind: permission.GrantTool, Name: t, GrantedAt: g.GrantTimes.Tools[t]})
	}
	for _, c := range g.SessionCommands {
		out = append(out, permission.SessionGrant{Kind: permission.GrantCommand, Name: c, GrantedAt: g.GrantTimes.Commands[c]})
	}
	return out
}

// loaded returns the host's engine, nil when none is loaded.
func (h *sessionHost) loaded() *engine.Engine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.eng
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
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	if eng := h.loaded(); eng != nil {
		return GrantsResult{Grants: grantInfos(eng.Permissions().SessionGrants())}, nil
	}
	g, err := s.opts.Store.Grants(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	return GrantsResult{Grants: grantInfos(sessionGrantsOf(g))}, nil
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
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	notHeld := fmt.Errorf("%w: session %q holds no %s grant %q", ErrNotFound, p.SessionID, p.Kind, p.Name)
	if eng := h.loaded(); eng != nil {
		if !eng.Permissions().RevokeGrant(kind, p.Name) {
			return nil, notHeld
		}
		if err := h.saveGrants(ctx, eng); err != nil {
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
