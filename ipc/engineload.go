package ipc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/store"
)

// engine returns the session's engine, building it from the store on first
// use: history, permission mode, shell policy, allowed commands and session
// grants are restored; the approver and the interactive handlers are the
// session's bridge. Only the runner passes reload (it alone starts turns, so
// it can swap an engine that must be rebuilt without pulling it from under a
// turn about to start).
func (h *sessionHost) engine(ctx context.Context, reload bool) (*engine.Engine, error) {
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	h.mu.Lock()
	eng := h.eng
	swap := reload && h.reload && eng != nil && !eng.Running() // never under a running turn
	if swap {
		h.eng = nil
	}
	h.mu.Unlock()
	if swap {
		if err := eng.Close(); err != nil && !errors.Is(err, engine.ErrClosed) {
			h.s.log.Warn("close engine", "session", h.id, "err", err)
		}
	} else if eng != nil {
		return eng, nil
	}
	eng, err := h.s.newEngine(ctx, h)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		_ = eng.Close() // the session went away while loading
		return nil, fmt.Errorf("%w: session %s closed", ErrConflict, h.id)
	}
	h.eng, h.reload = eng, false
	return eng, nil
}

func (s *Server) newEngine(ctx context.Context, h *sessionHost) (*engine.Engine, error) {
	st := s.opts.Store
	ss, err := st.Session(ctx, h.id)
	if err != nil {
		return nil, err
	}
	pr, err := st.Project(ctx, ss.ProjectID)
	if err != nil {
		return nil, err
	}
	msgs, err := st.Messages(ctx, h.id)
	if err != nil {
		return nil, err
	}
	g, err := st.Grants(ctx, h.id)
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
	sbCfg := set.sandboxConfig()
	sbCfg.Hidden = []string{s.opts.DataDir} // the store, logs and other sessions' files
	prof, err := s.profile(ctx, ss.Provider)
	if err != nil {
		return nil, fmt.Errorf("%w: session %s: %w", ErrConfig, h.id, err)
	}
	prov, model, err := s.providers.provider(ctx, prof, ss.Model)
	if err != nil {
		return nil, err
	}
	ag, err := s.agentSetupFor(ctx, h.id, ss.Agent)
	if err != nil {
		return nil, err
	}
	saver := &compactionSaver{h: h}
	hooks := []engine.Hook{saver}
	if vh := s.vcsHook(ctx, ss, pr.Path); vh != nil {
		hooks = append([]engine.Hook{vh}, hooks...)
	}
	dir := st.SessionDir(h.id)
	lang := s.sessionLang(ss)
	eng, err := buildEngine(engineSpec{
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
		Hooks:           hooks,
		Messages:        msgs,
		ToolResultDir:   toolResultDir(dir, h.id),
		SessionDir:      dir,
		ProjectID:       pr.ID,
		ReasoningEffort: set.ReasoningEffort,
		Watcher:         s.watcher(pr.ID, pr.Path),
	}, h)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", h.id, err)
	}
	saver.eng.Store(eng)
	if ws := eng.Permissions().Workspace(); ws != nil {
		// The session's agent decides the system prompt: a stored history
		// starts with the one it was saved with, which may be another
		// agent's.
		eng.SetSystemPrompt(ag.instructions(ws.Root(), lang))
	}
	h.restoreCompaction(ctx, eng)
	perms := eng.Permissions()
	for _, sg := range sessionGrantsOf(g) {
		perms.RestoreGrant(sg)
	}
	if ws := perms.Workspace(); ws != nil {
		for _, d := range g.Directories {
			// Exactly the path the user granted: one that resolves elsewhere
			// now (replaced by a link) is dropped.
			if err := ws.GrantExact(d.Path, d.Writable); err != nil {
				s.log.Warn("restore directory grant", "session", h.id, "dir", d.Path, "err", err)
			}
		}
	}
	eng.SetApprover(h.approve)
	eng.SetInteractor(interactor{h})
	s.attachMCP(eng, pr.ID)
	if s.opts.OnEngine != nil {
		s.opts.OnEngine(h.id, eng)
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

// grantsOf reads an engine's permission state in the store's shape.
func grantsOf(eng *engine.Engine) store.Grants {
	p := eng.Permissions()
	g := store.Grants{
		SessionTools:    []string{},
		SessionCommands: []string{},
		GrantTimes:      store.GrantTimes{Tools: map[string]time.Time{}, Commands: map[string]time.Time{}},
	}
	for _, sg := range p.SessionGrants() {
		switch sg.Kind {
		case permission.GrantTool:
			g.SessionTools = append(g.SessionTools, sg.Name)
			g.GrantTimes.Tools[sg.Name] = sg.GrantedAt
		case permission.GrantCommand:
			g.SessionCommands = append(g.SessionCommands, sg.Name)
			g.GrantTimes.Commands[sg.Name] = sg.GrantedAt
		}
	}
	if ws := p.Workspace(); ws != nil {
		g.Directories = ws.Grants()
	}
	return g
}

// saveGrants persists the engine's permission state.
func (h *sessionHost) saveGrants(ctx context.Context, eng *engine.Engine) error {
	return h.s.opts.Store.SaveGrants(ctx, h.id, grantsOf(eng))
}

// saveGrantsIfNew persists the grants after an always_* answer.
func (h *sessionHost) saveGrantsIfNew(eng *engine.Engine) {
	h.mu.Lock()
	dirty := h.grantsNew
	h.grantsNew = false
	h.mu.Unlock()
	if !dirty {
		return
	}
	if err := h.saveGrants(h.s.ctx, eng); err != nil {
		h.s.log.Warn("save grants", "session", h.id, "err", err)
	}
}

// compactionSaver persists the engine's compaction state (seed §14) after
// each turn, so that a session loaded again (after a restart, a new key or
// profile) continues with the same summary and counters.
type compactionSaver struct {
	engine.BaseHook
	h   *sessionHost
	eng atomic.Pointer[engine.Engine] // set right after the engine is built
}

// OnTurnEnd runs on the engine's goroutine at the end of every turn.
func (c *compactionSaver) OnTurnEnd(string, int, []string) {
	eng := c.eng.Load()
	if eng == nil {
		return
	}
	state := eng.CompactionState()
	if len(state) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.h.s.ctx), 5*time.Second)
	defer cancel()
	if err := c.h.s.opts.Store.SaveCompaction(ctx, c.h.id, state); err != nil {
		c.h.s.log.Warn("save compaction state", "session", c.h.id, "err", err)
	}
}

// restoreCompaction loads the session's saved compaction state into a new
// engine.
func (h *sessionHost) restoreCompaction(ctx context.Context, eng *engine.Engine) {
	cp := eng.Compactor()
	if cp == nil {
		return
	}
	state, err := h.s.opts.Store.Compaction(ctx, h.id)
	if err != nil || len(state) == 0 {
		if err != nil {
			h.s.log.Warn("read compaction state", "session", h.id, "err", err)
		}
		return
	}
	if err := cp.Restore(state); err != nil {
		h.s.log.Warn("restore compaction state", "session", h.id, "err", err)
	}
}
