package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/vcs"
)

// VCSHookTimeout bounds one snapshot taken from a VCS hook callback.
const VCSHookTimeout = 30 * time.Second

// VCSOptions is the seed's vcs option of createDefaultEngine: per-turn git
// snapshots of the workspace (seed §17). The zero value is off.
type VCSOptions struct {
	// Config is the mode (off, auto, native or shadow; "" is off), the git
	// binary and ShadowRoot, the folder of the shadow repositories (without
	// one, shadow mode is off and auto tracks only git work trees).
	vcs.Config
	// SessionID names the session's refs (refs/agent/<id>/); default
	// "default".
	SessionID string
}

// vcsHook connects a SessionVCS to the turn lifecycle (the seed's VcsHook):
// the before-turn snapshot is taken when the turn's first tool starts, and
// OnTurnEnd records the turn. The workspace changes only through tools, so
// a snapshot at the first tool is the turn's base, and a turn that runs no
// tool (a chat turn) runs no git at all: nothing of it is on the path from
// turn_start to the model's first request. Changes made meanwhile by
// someone else are recorded by the next snapshot, as before. Callbacks run
// on the engine's goroutine, each snapshot bounded by VCSHookTimeout;
// failures are logged, never returned or panicked.
type vcsHook struct {
	BaseHook
	s   *vcs.SessionVCS
	log *slog.Logger

	mu     sync.Mutex // guards begun, turnID
	begun  bool       // the running turn's before snapshot was taken
	turnID string     // the running turn's id (its turn_start's taskId)
}

var (
	_ Hook     = (*vcsHook)(nil)
	_ Observer = (*vcsHook)(nil)
)

// Observe notes the running turn's id from its turn_start, so that its
// snapshot records it (vcs.SessionVCS.CommitTurnID).
func (h *vcsHook) Observe(ev Event) {
	if ev.Type != protocol.EventTurnStart {
		return
	}
	h.mu.Lock()
	h.turnID = ev.TaskID()
	h.mu.Unlock()
}

// NewVCSHook returns the hook that snapshots each turn of s. Compose it with
// the caller's own hook (CompositeHook); backend.NewEngine does so for
// EngineOptions.VCS.
func NewVCSHook(s *vcs.SessionVCS) Hook {
	return &vcsHook{s: s, log: slog.Default().With("component", "vcs")}
}

// OnTurnStart starts a turn without a snapshot yet.
func (h *vcsHook) OnTurnStart(string) {
	h.mu.Lock()
	h.begun = false
	h.mu.Unlock()
}

// OnToolStarted snapshots the workspace before the turn's first tool runs.
func (h *vcsHook) OnToolStarted(string) {
	h.mu.Lock()
	first := !h.begun
	h.begun = true
	h.mu.Unlock()
	if first {
		h.run("begin turn", func(ctx context.Context) error { return h.s.BeginTurn(ctx) })
	}
}

// OnTurnEnd records the turn when it changed something (a turn that ran no
// tool changed nothing).
func (h *vcsHook) OnTurnEnd(status string, _ int, _ []string) {
	h.mu.Lock()
	begun, turnID := h.begun, h.turnID
	h.begun, h.turnID = false, ""
	h.mu.Unlock()
	if begun {
		h.run("commit turn", func(ctx context.Context) error { return h.s.CommitTurnID(ctx, status, turnID) })
	}
}

func (h *vcsHook) run(op string, f func(context.Context) error) {
	if h == nil || !h.s.Enabled() {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("vcs hook panicked", "op", op, "session", h.s.SessionID(),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), VCSHookTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		h.log.Warn("vcs snapshot failed", "op", op, "session", h.s.SessionID(), "err", err)
	}
}
