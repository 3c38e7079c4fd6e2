package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

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
// OnTurnStart takes the before-turn snapshot and OnTurnEnd records the turn.
// The before-turn snapshot runs beside the turn's first model request (it
// is off the path from turn_start to llm_request): the workspace changes
// only through tools, so OnToolStarted waits for it, and so does
// OnTurnEnd. Callbacks run on the engine's goroutine, each snapshot bounded
// by VCSHookTimeout; failures are logged, never returned or panicked.
type vcsHook struct {
	BaseHook
	s   *vcs.SessionVCS
	log *slog.Logger

	mu    sync.Mutex    // guards begun
	begun chan struct{} // closed when the turn's before snapshot is taken; nil when none runs
}

var _ Hook = (*vcsHook)(nil)

// NewVCSHook returns the hook that snapshots each turn of s. Compose it with
// the caller's own hook (CompositeHook); agent.NewDefault does so for
// agent.DefaultOptions.VCS.
func NewVCSHook(s *vcs.SessionVCS) Hook {
	return &vcsHook{s: s, log: slog.Default().With("component", "vcs")}
}

// OnTurnStart starts the snapshot of the workspace before the turn.
func (h *vcsHook) OnTurnStart(string) {
	if h == nil || !h.s.Enabled() {
		return
	}
	h.waitBegun() // a turn that ended without OnTurnEnd
	done := make(chan struct{})
	h.mu.Lock()
	h.begun = done
	h.mu.Unlock()
	go func() {
		defer close(done)
		h.run("begin turn", func(ctx context.Context) error { return h.s.BeginTurn(ctx) })
	}()
}

// OnToolStarted waits for the before snapshot: the tool may change the
// workspace.
func (h *vcsHook) OnToolStarted(string) { h.waitBegun() }

// OnTurnEnd records the turn when it changed something.
func (h *vcsHook) OnTurnEnd(status string, _ int, _ []string) {
	h.waitBegun()
	h.run("commit turn", func(ctx context.Context) error { return h.s.CommitTurn(ctx, status) })
}

// waitBegun waits until the running turn's before snapshot is taken.
func (h *vcsHook) waitBegun() {
	if h == nil {
		return
	}
	h.mu.Lock()
	done := h.begun
	h.mu.Unlock()
	if done != nil {
		<-done
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
