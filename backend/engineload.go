package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// Engine returns the session's engine, loading it when needed (see
// engine); handlers use it, never swapping an engine that must be rebuilt.
func (h *Session) Engine(ctx context.Context) (*engine.Engine, error) {
	return h.engine(ctx, false)
}

// engine returns the session's engine, building it from the store on first
// use: history, permission mode, shell policy, allowed commands and session
// grants are restored; the approver and the interactive handlers are the
// session's bridge. Only the runner passes reload (it alone starts turns, so
// it can swap an engine that must be rebuilt without pulling it from under a
// turn about to start).
func (h *Session) engine(ctx context.Context, reload bool) (*engine.Engine, error) {
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
	eng, err := h.build(ctx)
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

// build has the server's Engines build the session's engine, then restores
// what the host keeps durable (compaction state, grants), sets the
// session's bridge as approver and interactor, and lets the Engines attach
// the rest (MCP, the embedder's OnEngine) before any turn runs on it.
func (h *Session) build(ctx context.Context) (*engine.Engine, error) {
	g, err := h.s.opts.Store.Grants(ctx, h.id)
	if err != nil {
		return nil, err
	}
	saver := &compactionSaver{h: h}
	eng, err := h.s.opts.Engines.Build(ctx, h, []engine.Hook{saver})
	if err != nil {
		return nil, err
	}
	saver.eng.Store(eng)
	h.restoreCompaction(ctx, eng)
	h.restoreLastError(ctx, eng)
	perms := eng.Permissions()
	for _, sg := range SessionGrantsOf(g) {
		perms.RestoreGrant(sg)
	}
	if ws := perms.Workspace(); ws != nil {
		for _, d := range g.Directories {
			// Exactly the path the user granted: one that resolves elsewhere
			// now (replaced by a link) is dropped.
			if err := ws.GrantExact(d.Path, d.Writable); err != nil {
				h.s.log.Warn("restore directory grant", "session", h.id, "dir", d.Path, "err", err)
			}
		}
	}
	eng.SetApprover(h.approve)
	eng.SetInteractor(interactor{h})
	h.s.opts.Engines.Attach(h, eng)
	return eng, nil
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

// SaveGrants persists the engine's permission state.
func (h *Session) SaveGrants(ctx context.Context, eng *engine.Engine) error {
	return h.s.opts.Store.SaveGrants(ctx, h.id, grantsOf(eng))
}

// saveGrantsIfNew persists the grants after an always_* answer.
func (h *Session) saveGrantsIfNew(eng *engine.Engine) {
	h.mu.Lock()
	dirty := h.grantsNew
	h.grantsNew = false
	h.mu.Unlock()
	if !dirty {
		return
	}
	if err := h.SaveGrants(h.s.ctx, eng); err != nil {
		h.s.log.Warn("save grants", "session", h.id, "err", err)
	}
}

// compactionSaver persists the engine's compaction state (seed §14) after
// each turn, so that a session loaded again (after a restart, a new key or
// profile) continues with the same summary and counters.
type compactionSaver struct {
	engine.BaseHook
	h   *Session
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
func (h *Session) restoreCompaction(ctx context.Context, eng *engine.Engine) {
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

// restoreLastError gives a loaded engine the error its session's last turn
// ended in, when the store says it did: turn.retry (and a queued retry)
// works after a restart as before it. Only the error event of that very
// turn counts.
func (h *Session) restoreLastError(ctx context.Context, eng *engine.Engine) {
	st := h.s.opts.Store
	end, ok, err := st.LastEventOfType(ctx, h.id, string(protocol.EventTurnEnd))
	if err != nil || !ok {
		if err != nil {
			h.s.log.Warn("read last turn_end", "session", h.id, "err", err)
		}
		return
	}
	var ed protocol.TurnEndData
	if json.Unmarshal(end.Data, &ed) != nil || ed.Status != protocol.TurnError {
		return
	}
	if rw, ok, err := st.LastEventOfType(ctx, h.id, string(protocol.EventSessionRewound)); err != nil || ok && rw.Seq > end.Seq {
		return // the failed turn was rewound away: nothing to retry
	}
	ev, ok, err := st.LastEventOfType(ctx, h.id, string(protocol.EventError))
	if err != nil || !ok || ev.TurnID != end.TurnID || ev.Seq > end.Seq {
		return
	}
	var d protocol.EventErrorData
	if json.Unmarshal(ev.Data, &d) != nil || !d.Retriable {
		return
	}
	eng.RestoreLastError(d)
}

// SessionGrantsOf reads the stored grants in the permission engine's shape.
func SessionGrantsOf(g store.Grants) []permission.SessionGrant {
	out := make([]permission.SessionGrant, 0, len(g.SessionTools)+len(g.SessionCommands))
	for _, t := range g.SessionTools {
		out = append(out, permission.SessionGrant{Kind: permission.GrantTool, Name: t, GrantedAt: g.GrantTimes.Tools[t]})
	}
	for _, c := range g.SessionCommands {
		out = append(out, permission.SessionGrant{Kind: permission.GrantCommand, Name: c, GrantedAt: g.GrantTimes.Commands[c]})
	}
	return out
}
