package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/tools/web"
)

// engines is the backend's Engines: how a session's engine is built (the
// provider, the agent, the default wiring of wiring.go, NewEngine) and
// what joins it once the host wired it.
type engines struct{ s *Backend }

var _ Engines = engines{}

// Build implements Engines: it builds a session's engine from the
// store (history, permission mode, shell policy, allowed commands, sandbox,
// provider, agent, language, change tracking), with hooks after its own.
func (x engines) Build(ctx context.Context, h *Session, hooks []engine.Hook) (*engine.Engine, error) {
	s := x.s
	st := s.opts.Store
	ss, err := st.Session(ctx, h.ID())
	if err != nil {
		return nil, err
	}
	pr, err := st.Project(ctx, ss.ProjectID)
	if err != nil {
		return nil, err
	}
	msgs, err := st.Messages(ctx, h.ID())
	if err != nil {
		return nil, err
	}
	// Mode, shell policy and allowed commands live on the session (updated
	// by the set* methods); the grants hold what the user granted in turns.
	set := sessionSettings(ss)
	mode, err := permission.ParseMode(ss.Mode)
	if err != nil {
		return nil, err
	}
	policy, err := permission.ParseShellPolicy(set.ShellPolicy)
	if err != nil {
		return nil, err
	}
	allowed := set.AllowedCommands
	sbCfg := sandboxConfig(set)
	sbCfg.Hidden = []string{s.opts.DataDir} // the store, logs and other sessions' files
	prof, err := s.profile(ctx, ss.Provider)
	if err != nil {
		return nil, fmt.Errorf("%w: session %s: %w", ErrConfig, h.ID(), err)
	}
	lang := s.sessionLang(ss)
	prov, model, err := s.providers.provider(ctx, prof, ss.Model, lang)
	if err != nil {
		return nil, err
	}
	ag, err := s.agentSetupFor(ctx, h.ID(), ss.Agent)
	if err != nil {
		return nil, err
	}
	if vh := s.vcsHook(ctx, ss, pr.Path); vh != nil {
		hooks = append([]engine.Hook{vh}, hooks...)
	}
	dir := st.SessionDir(h.ID())
	// The memory of requests that carried uploads goes back to the OS.
	hooks = append(hooks, &mediaRelease{release: s.opts.ReleaseMemory})
	o := EngineOptions{
		Workspace:       pr.Path,
		Model:           model,
		Provider:        prov,
		Mode:            mode,
		AllowedCommands: allowed,
		ShellPolicy:     policy,
		Sandbox:         sbCfg,
		AgentType:       ag.agentType,
		Lang:            lang,
		ContextWindow:   prof.ContextWindow,
		Hook:            engine.CompositeHook(hooks),
		Messages:        msgs,
		ToolResultDir:   toolResultDir(dir, h.ID()),
		SessionDir:      dir,
		ProjectID:       pr.ID,
		ReasoningEffort: set.ReasoningEffort,
		Watcher:         s.watcher(pr.ID, pr.Path),
		GitConfirmed:    s.gitStateOf(ctx, pr).confirmed(),
		// A call that needs the user is never decided by a default: the
		// session's bridge is set as approver right after.
		DefaultApproval: permission.DefaultDeny,
		// Forwards explore's tool calls to the UI (parentReqId).
		SubagentHookFactory: h.SubagentHook,
		// web_search asks the backend the app configured (search.set).
		Web: web.Options{Search: searchBackend{s}},
		// A call's start is durable before it runs (at most once).
		Ledger: h.Ledger(),
		// Usage goes on from the session's stored totals, priced by its
		// profile's prices as they are at each response.
		Prices: profilePrices{b: s, profile: prof.Name},
		Usage:  storedUsage(s.log, ss),
	}
	if s.opts.Terminals != nil { // a nil *Manager must not become a non-nil interface
		o.Terminals = s.opts.Terminals
	}
	eng, err := NewEngine(o)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", h.ID(), err)
	}
	if ws := eng.Permissions().Workspace(); ws != nil {
		// The session's agent decides the system prompt: a stored history
		// starts with the one it was saved with, which may be another
		// agent's.
		eng.SetSystemPrompt(ag.instructions(ws.Root(), lang))
	}
	return eng, nil
}

// toolResultDir is where a session's over-budget tool results are spilled:
// <TOOL_RESULT_DIR>/<sessionId> when TOOL_RESULT_DIR is set (a folder per
// session, so no session reads another's results), else the session's own
// folder. The engine grants it to the session read-only, so the model can
// read_file the path it is given.
func toolResultDir(sessionDir, sessionID string) string {
	if root := os.Getenv("TOOL_RESULT_DIR"); root != "" {
		if abs, err := filepath.Abs(root); err == nil {
			return filepath.Join(abs, sessionID)
		}
	}
	return filepath.Join(sessionDir, "tool-results")
}

// Attach implements Engines: once the host restored the session's
// grants and set its bridge, the project's MCP tools and the session's
// own servers' tools (mcp.sessionAdd) join and the
// embedder's OnEngine runs, before any turn.
func (x engines) Attach(h *Session, eng *engine.Engine) {
	x.s.attachMCP(eng, h.ProjectID())
	x.s.attachSessionMCP(eng, h.ID())
	if x.s.opts.OnEngine != nil {
		x.s.opts.OnEngine(h.ID(), eng)
	}
}
