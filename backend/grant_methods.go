package backend

import (
	"context"
	"fmt"
	"slices"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// grantRoutes serves the session's always_tool and always_command grants.
// While the session's engine is loaded its permission engine owns them (the
// store is its copy, saved on every change); otherwise the store does. The
// host's loadMu keeps a revocation and an engine load from interleaving.

// grantInfos lists grants on the wire. A stored tool grant of a form that
// grants nothing any more (tools.StaleToolGrant: the generic mcp_call_tool,
// an MCP tool by its registered name) is left out, as the permission engine
// drops it when the session loads (RestoreGrant).
func grantInfos(gs []permission.SessionGrant) []protocol.Grant {
	out := make([]protocol.Grant, 0, len(gs))
	for _, g := range gs {
		if g.Kind == permission.GrantTool && tools.StaleToolGrant(g.Name) {
			continue
		}
		gi := protocol.Grant{Kind: string(g.Kind), Name: g.Name}
		if !g.GrantedAt.IsZero() {
			at := g.GrantedAt.UTC()
			gi.GrantedAt = &at
		}
		out = append(out, gi)
	}
	return out
}

func (b *Backend) Grants(ctx context.Context, p protocol.SessionIDParams) (protocol.SessionGrantsResult, error) {
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionGrantsResult{}, err
	}
	h.lockLoad()
	defer h.unlockLoad()
	if eng := h.Loaded(); eng != nil {
		return protocol.SessionGrantsResult{Grants: grantInfos(eng.Permissions().SessionGrants())}, nil
	}
	g, err := b.opts.Store.Grants(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionGrantsResult{}, err
	}
	return protocol.SessionGrantsResult{Grants: grantInfos(SessionGrantsOf(g))}, nil
}

func (b *Backend) RevokeGrant(ctx context.Context, p protocol.SessionRevokeGrantParams) (protocol.RevokedResult, error) {
	kind := permission.GrantKind(string(p.Kind))
	if kind != permission.GrantTool && kind != permission.GrantCommand {
		return protocol.RevokedResult{}, protocol.InvalidField("kind", `must be "tool" or "command"`)
	}
	h, err := b.host(ctx, p.SessionID)
	if err != nil {
		return protocol.RevokedResult{}, err
	}
	h.lockLoad()
	defer h.unlockLoad()
	notHeld := fmt.Errorf("%w: session %q holds no %s grant %q", ErrNotFound, p.SessionID, p.Kind, p.Name)
	if eng := h.Loaded(); eng != nil {
		if !eng.Permissions().RevokeGrant(kind, p.Name) {
			return protocol.RevokedResult{}, notHeld
		}
		if err := h.SaveGrants(ctx, eng); err != nil {
			return protocol.RevokedResult{}, err
		}
		return protocol.RevokedResult{Revoked: true}, nil
	}
	g, err := b.opts.Store.Grants(ctx, p.SessionID)
	if err != nil {
		return protocol.RevokedResult{}, err
	}
	list, times := &g.SessionTools, g.GrantTimes.Tools
	if kind == permission.GrantCommand {
		list, times = &g.SessionCommands, g.GrantTimes.Commands
	}
	i := slices.Index(*list, p.Name)
	if i < 0 {
		return protocol.RevokedResult{}, notHeld
	}
	*list = slices.Delete(*list, i, i+1)
	delete(times, p.Name)
	if err := b.opts.Store.SaveGrants(ctx, p.SessionID, g); err != nil {
		return protocol.RevokedResult{}, err
	}
	return protocol.RevokedResult{Revoked: true}, nil
}
