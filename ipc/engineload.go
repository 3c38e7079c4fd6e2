package ipc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

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
	prov, model, err := s.providers.provider(ctx, ss.Model)
	if err != nil {
		return nil, err
	}
	dir := st.SessionDir(h.id)
	eng, err := buildEngine(engineSpec{
		Workspace:       pr.Path,
		Model:           model,
		Provider:        prov,
		Mode:            mode,
		AllowedCommands: allowed,
		ShellPolicy:     policy,
		AgentType:       ss.Agent,
		Messages:        msgs,
		ToolResultDir:   filepath.Join(dir, "tool-results"),
		SessionDir:      dir,
		ProjectID:       pr.ID,
		ReasoningEffort: set.ReasoningEffort,
	}, h)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", h.id, err)
	}
	perms := eng.Permissions()
	for _, t := range g.SessionTools {
		perms.AllowToolForSession(t)
	}
	for _, c := range g.SessionCommands {
		perms.AllowCommandForSession(c)
	}
	if ws := perms.Workspace(); ws != nil {
		for _, d := range g.Directories {
			if err := ws.Grant(d.Path, d.Writable); err != nil {
				s.log.Warn("restore directory grant", "session", h.id, "dir", d.Path, "err", err)
			}
		}
	}
	eng.SetApprover(h.approve)
	eng.SetInteractor(interactor{h})
	return eng, nil
}

// grantsOf reads an engine's permission state in the store's shape.
func grantsOf(eng *engine.Engine) store.Grants {
	p := eng.Permissions()
	g := store.Grants{
		Mode:            string(p.Mode()),
		ShellPolicy:     string(p.ShellPolicy()),
		AllowedCommands: p.AllowedCommands(),
		SessionTools:    p.SessionTools(),
		SessionCommands: p.SessionCommands(),
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
