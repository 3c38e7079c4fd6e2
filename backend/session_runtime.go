package backend

import (
	"context"
	"fmt"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/store"
)

// Runtime changes (seed §6.3): each is stored first, then applied to a loaded
// engine (the next tool call or model request sees it). An unloaded session
// picks them up when its engine is built.

func (b *Backend) SetMode(ctx context.Context, p protocol.SessionSetModeParams) (protocol.Session, error) {
	mode, err := permission.ParseMode(string(p.Mode))
	if err != nil {
		return protocol.Session{}, protocol.InvalidField("mode", err.Error())
	}
	ss, err := b.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) { ss.Mode = string(mode) })
	if err != nil {
		return protocol.Session{}, err
	}
	if eng := b.loadedEngine(p.SessionID); eng != nil {
		eng.SetMode(mode)
	}
	return b.sessionInfo(ctx, ss), nil
}

func (b *Backend) SetModel(ctx context.Context, p protocol.SessionSetModelParams) (protocol.Session, error) {
	ss, err := b.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) { ss.Model = p.Model })
	if err != nil {
		return protocol.Session{}, err
	}
	if eng := b.loadedEngine(p.SessionID); eng != nil {
		eng.SetModel(p.Model)
	}
	return b.sessionInfo(ctx, ss), nil
}

func (b *Backend) SetAgent(ctx context.Context, p protocol.SessionSetAgentParams) (protocol.Session, error) {
	ag, err := b.agent(ctx, p.Agent)
	if err != nil {
		return protocol.Session{}, fmt.Errorf("agent: %w", err)
	}
	// Switching agents takes the agent's model when it names one (seed
	// §16.2: engine.model = agent.model ?? engine.model).
	ss, err := b.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
		ss.Agent = p.Agent
		if ag.Model != "" {
			ss.Model = ag.Model
		}
	})
	if err != nil {
		return protocol.Session{}, err
	}
	// The agent decides the prompt and the tools: the engine is rebuilt
	// (history kept in the store) before the session's next turn.
	b.reloadEngine(p.SessionID)
	return b.sessionInfo(ctx, ss), nil
}

// reloadEngine marks a loaded session's engine to be rebuilt from the store
// before its next turn (never under a running one).
func (b *Backend) reloadEngine(sessionID string) {
	if h := b.loadedHost(sessionID); h != nil {
		h.MarkReload()
	}
}

func (b *Backend) SetPermissions(ctx context.Context, p protocol.SessionSetPermissionsParams) (protocol.Session, error) {
	var policy permission.ShellPolicy
	if p.ShellPolicy != nil {
		var err error
		if policy, err = permission.ParseShellPolicy(string(*p.ShellPolicy)); err != nil {
			return protocol.Session{}, protocol.InvalidField("shellPolicy", err.Error())
		}
	}
	if p.ApprovalTimeoutMS != nil && *p.ApprovalTimeoutMS < 0 {
		return protocol.Session{}, protocol.InvalidField("approvalTimeoutMs", "must not be negative")
	}
	var sbMode sandbox.Mode
	if p.Sandbox != nil {
		var err error
		if sbMode, err = sandbox.ParseMode(string(*p.Sandbox)); err != nil {
			return protocol.Session{}, protocol.InvalidField("sandbox", err.Error())
		}
	}
	ss, err := b.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
		set := sessionSettings(*ss)
		if p.AllowedCommands != nil {
			set.AllowedCommands = *p.AllowedCommands
		}
		if p.ShellPolicy != nil {
			set.ShellPolicy = string(policy)
		}
		if p.ApprovalTimeoutMS != nil {
			set.ApprovalTimeoutMS = *p.ApprovalTimeoutMS
		}
		if p.Sandbox != nil {
			set.Sandbox = string(sbMode)
		}
		if p.SandboxNetwork != nil {
			set.SandboxNetwork = *p.SandboxNetwork
		}
		ss.Settings = withSettings(ss.Settings, set)
	})
	if err != nil {
		return protocol.Session{}, err
	}
	set := sessionSettings(ss)
	if h := b.loadedHost(p.SessionID); h != nil {
		h.SetApprovalTimeout(msDuration(set.ApprovalTimeoutMS))
		if eng := h.Loaded(); eng != nil {
			perms := eng.Permissions()
			if p.AllowedCommands != nil {
				perms.SetAllowedCommands(*p.AllowedCommands)
			}
			if p.ShellPolicy != nil {
				perms.SetShellPolicy(policy)
			}
			if box := perms.SandboxBox(); box != nil { // as stored: one source
				cfg := sandboxConfig(set)
				_ = box.SetMode(cfg.Mode) // parsed by sandboxConfig
				box.SetNetwork(cfg.Network)
			}
		}
	}
	return b.sessionInfo(ctx, ss), nil
}

// loadedEngine returns the session's engine if it is loaded.
func (b *Backend) loadedEngine(id string) *engine.Engine {
	h := b.loadedHost(id)
	if h == nil {
		return nil
	}
	return h.Loaded()
}
