package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
)

// The mcp.* methods edit an open project's MCP servers and persist every
// change to <workspace>/.agent/mcp.json (mcp_project.go owns the managers).
// What the shell adds or edits (mcp.add, mcp.update of a trusted server) is
// trusted; a server from the file runs only after mcp.trust.
// An edit and its save run under the project's lock, so concurrent calls
// never lose one another's changes, and as one mcp.Manager.Edit, so a
// reload by the file watcher never applies the file as it was before the
// save over the edit; connecting runs in the background and is reported by
// mcp.status notifications.

func (b *Backend) MCPList(ctx context.Context, p protocol.ProjectIDParams) (protocol.MCPListResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.MCPListResult{}, err
	}
	pm.mu.Lock()
	warns := append([]protocol.MCPWarning{}, pm.warnings...)
	pm.mu.Unlock()
	cfgs, err := wireConfigs(pm.mgr.Configs())
	if err != nil {
		return protocol.MCPListResult{}, err
	}
	return protocol.MCPListResult{Servers: pm.servers(), Configs: cfgs, Warnings: wireWarnings(warns), ConfigPath: pm.path}, nil
}

func (b *Backend) AddMCP(ctx context.Context, p protocol.MCPAddParams) (protocol.MCPServerResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	cfg, warns, err := parseServerParam(json.RawMessage(p.Config), "")
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	err = pm.mgr.Edit(func() error {
		if err := pm.mgr.AddConfig(ctx, cfg); err != nil {
			return err
		}
		if err := pm.saveLocked(); err != nil {
			_ = pm.mgr.RemoveConfig(context.WithoutCancel(ctx), cfg.Name)
			return err
		}
		return nil
	})
	if err != nil {
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.add: %w", err)
	}
	pm.connectLaterLocked(cfg)
	b.broadcast("mcp.changed", newMCPChanged(pm.id, "api", []string{cfg.Name}, nil, nil, nil))
	info, err := pm.serverInfo(cfg.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	return protocol.MCPServerResult{Server: info, Warnings: wireWarnings(warns)}, nil
}

func (b *Backend) UpdateMCP(ctx context.Context, p protocol.MCPUpdateParams) (protocol.MCPServerResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	cfg, warns, err := parseServerParam(json.RawMessage(p.Config), p.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	err = pm.mgr.Edit(func() error {
		if err := pm.mgr.UpdateConfig(ctx, p.Name, cfg); err != nil {
			return err
		}
		return pm.saveLocked()
	})
	if err != nil {
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.update: %w", err)
	}
	info, err := pm.serverInfo(cfg.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	if info.State == mcp.StateClosed || info.State == mcp.StateFailed {
		pm.connectLaterLocked(cfg) // changed, or enabled again
	}
	ch := newMCPChanged(pm.id, "api", nil, nil, []string{p.Name}, nil)
	if cfg.Name != p.Name {
		ch.Added, ch.Removed, ch.Changed = []string{cfg.Name}, []string{p.Name}, []string{}
	}
	b.broadcast("mcp.changed", ch) // UpdateConfig sent the new mcp.status
	return protocol.MCPServerResult{Server: info, Warnings: wireWarnings(warns)}, nil
}

func (b *Backend) RemoveMCP(ctx context.Context, p protocol.MCPNameParams) (protocol.RemovedResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.RemovedResult{}, err
	}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	info, err := pm.serverInfo(p.Name)
	if err != nil {
		return protocol.RemovedResult{}, err
	}
	if info.Type == mcp.TypeBuiltin {
		return protocol.RemovedResult{}, fmt.Errorf("%w: %q is a builtin preset: disable it with mcp.update and {\"enabled\": false}", ErrConflict, p.Name)
	}
	err = pm.mgr.Edit(func() error {
		if err := pm.mgr.RemoveConfig(ctx, p.Name); err != nil {
			return err
		}
		return pm.saveLocked()
	})
	if err != nil {
		return protocol.RemovedResult{}, fmt.Errorf("mcp.remove: %w", err)
	}
	b.broadcast("mcp.changed", newMCPChanged(pm.id, "api", nil, []string{p.Name}, nil, nil))
	return protocol.RemovedResult{Removed: true}, nil
}

// mcpRefresh reconnects a server and waits for the handshake: a failed
// connect is not an error of the call, it is the server's state (failed,
// with lastError).
func (b *Backend) RefreshMCP(ctx context.Context, p protocol.MCPNameParams) (protocol.MCPServerResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	if _, err := pm.serverInfo(p.Name); err != nil {
		return protocol.MCPServerResult{}, err
	}
	err = pm.mgr.Refresh(ctx, p.Name)
	switch {
	case errors.Is(err, mcp.ErrUnknownServer), errors.Is(err, mcp.ErrDisabled), errors.Is(err, mcp.ErrClosed), errors.Is(err, mcp.ErrUntrusted):
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.refresh: %w", err)
	case err != nil && ctx.Err() != nil:
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.refresh: %w", ctx.Err())
	}
	info, err := pm.serverInfo(p.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	return protocol.MCPServerResult{Server: info, Warnings: []protocol.MCPWarning{}}, nil
}

// mcpTrust approves a server's config: the hash the trust card showed
// (mcp.list). A hash that is not the current config's is refused (-32003):
// the file changed since it was shown. The server then connects in the
// background.
func (b *Backend) TrustMCP(ctx context.Context, p protocol.MCPTrustParams) (protocol.MCPServerResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	if err := pm.mgr.Trust(ctx, p.Name, p.Hash); err != nil {
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.trust: %w", err)
	}
	info, err := pm.serverInfo(p.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	if info.State == mcp.StateClosed {
		pm.goLocked(func() { _ = pm.mgr.Connect(pm.ctx, p.Name) })
	}
	return protocol.MCPServerResult{Server: info, Warnings: []protocol.MCPWarning{}}, nil
}

// mcpUntrust revokes a server's approval; a running server is stopped.
func (b *Backend) UntrustMCP(ctx context.Context, p protocol.MCPNameParams) (protocol.MCPServerResult, error) {
	pm, err := b.projectMCPFor(ctx, p.ProjectID)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	if err := pm.mgr.Untrust(ctx, p.Name); err != nil {
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.untrust: %w", err)
	}
	info, err := pm.serverInfo(p.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	return protocol.MCPServerResult{Server: info, Warnings: []protocol.MCPWarning{}}, nil
}

// connectLaterLocked connects an enabled server in the background (pm.mu
// is held).
func (pm *projectMCP) connectLaterLocked(cfg mcp.ServerConfig) {
	if !cfg.Enabled {
		return
	}
	pm.goLocked(func() { _ = pm.mgr.Connect(pm.ctx, cfg.Name) })
}
