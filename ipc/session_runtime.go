package ipc

import (
	"context"
	"encoding/json"
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

func (s *Server) sessionSetMode(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.SessionSetModeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	mode, err := permission.ParseMode(string(p.Mode))
	if err != nil {
		return nil, invalidField("mode", err.Error())
	}
	ss, err := s.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) { ss.Mode = string(mode) })
	if err != nil {
		return nil, err
	}
	if eng := s.loadedEngine(p.SessionID); eng != nil {
		eng.SetMode(mode)
	}
	return s.sessionInfo(ctx, ss), nil
}

func (s *Server) sessionSetModel(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.SessionSetModelParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	ss, err := s.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) { ss.Model = p.Model })
	if err != nil {
		return nil, err
	}
	if eng := s.loadedEngine(p.SessionID); eng != nil {
		eng.SetModel(p.Model)
	}
	return s.sessionInfo(ctx, ss), nil
}

func (s *Server) sessionSetAgent(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.SessionSetAgentParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	ag, err := s.agent(ctx, p.Agent)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	// Switching agents takes the agent's model when it names one (seed
	// §16.2: engine.model = agent.model ?? engine.model).
	ss, err := s.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
		ss.Agent = p.Agent
		if ag.Model != "" {
			ss.Model = ag.Model
		}
	})
	if err != nil {
		return nil, err
	}
	// The agent decides the prompt and the tools: the engine is rebuilt
	// (history kept in the store) before the session's next turn.
	s.reloadEngine(p.SessionID)
	return s.sessionInfo(ctx, ss), nil
}

// reloadEngine marks a loaded session's engine to be rebuilt from the store
// before its next turn (never under a running one).
func (s *Server) reloadEngine(sessionID string) {
	if h := s.loadedHost(sessionID); h != nil {
		h.MarkReload()
	}
}

// SetPermissionsParams are the params of session.setPermissions; absent
// members are left unchanged.
type SetPermissionsParams = protocol.SessionSetPermissionsParams

func (s *Server) sessionSetPermissions(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p SetPermissionsParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	var policy permission.ShellPolicy
	if p.ShellPolicy != nil {
		var err error
		if policy, err = permission.ParseShellPolicy(string(*p.ShellPolicy)); err != nil {
			return nil, invalidField("shellPolicy", err.Error())
		}
	}
	if p.ApprovalTimeoutMS != nil && *p.ApprovalTimeoutMS < 0 {
		return nil, invalidField("approvalTimeoutMs", "must not be negative")
	}
	var sbMode sandbox.Mode
	if p.Sandbox != nil {
		var err error
		if sbMode, err = sandbox.ParseMode(string(*p.Sandbox)); err != nil {
			return nil, invalidField("sandbox", err.Error())
		}
	}
	ss, err := s.opts.Store.UpdateSession(ctx, p.SessionID, func(ss *store.Session) {
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
		return nil, err
	}
	set := sessionSettings(ss)
	if h := s.loadedHost(p.SessionID); h != nil {
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
				cfg := set.sandboxConfig()
				_ = box.SetMode(cfg.Mode) // parsed by sandboxConfig
				box.SetNetwork(cfg.Network)
			}
		}
	}
	return s.sessionInfo(ctx, ss), nil
}

// loadedEngine returns the session's engine if it is loaded.
func (s *Server) loadedEngine(id string) *engine.Engine {
	h := s.loadedHost(id)
	if h == nil {
		return nil
	}
	return h.Loaded()
}
