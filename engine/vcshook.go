package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
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
// Callbacks run synchronously on the engine's goroutine, each bounded by
// VCSHookTimeout; failures are logged, never returned or panicked.
type vcsHook struct {
	BaseHook
	s   *vcs.SessionVCS
	log *slog.Logger
}

var _ Hook = (*vcsHook)(nil)

// NewVCSHook returns the hook that snapshots each turn of s. Compose it with
// the caller's own hook (CompositeHook); agent.NewDefault does so for
// agent.DefaultOptions.VCS.
func NewVCSHook(s *vcs.SessionVCS) Hook {
	return &vcsHook{s: s, log: slog.Default().With("component", "vcs")}
}

// OnTurnStart snapshots the workspace before the turn.
func (h *vcsHook) OnTurnStart(string) {
	h.run("begin turn", func(ctx context.Context) error { return h.s.BeginTurn(ctx) })
}

// OnTurnEnd records the turn when it changed something.
func (h *vcsHook) OnTurnEnd(status string, _ int, _ []string) {
	h.run("commit turn", func(ctx context.Context) error { return h.s.CommitTurn(ctx, status) })
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
