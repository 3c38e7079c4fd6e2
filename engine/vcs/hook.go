package vcs

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/zqagent/sidecar/engine"
)

// HookTimeout bounds one snapshot taken from a hook callback.
const HookTimeout = 30 * time.Second

// Hook connects a SessionVCS to the engine's turn lifecycle (the seed's
// VcsHook): OnTurnStart takes the before-turn snapshot and OnTurnEnd records
// the turn. Callbacks run synchronously on the engine's goroutine, each
// bounded by HookTimeout; failures are logged, never returned or panicked.
type Hook struct {
	engine.BaseHook
	s   *SessionVCS
	log *slog.Logger
}

var _ engine.Hook = (*Hook)(nil)

// NewHook returns the engine hook for s.
func NewHook(s *SessionVCS) engine.Hook {
	return &Hook{s: s, log: slog.Default().With("component", "vcs")}
}

// OnTurnStart snapshots the workspace before the turn.
func (h *Hook) OnTurnStart(string) {
	h.run("begin turn", func(ctx context.Context) error { return h.s.BeginTurn(ctx) })
}

// OnTurnEnd records the turn when it changed something.
func (h *Hook) OnTurnEnd(status string, _ int, _ []string) {
	h.run("commit turn", func(ctx context.Context) error { return h.s.CommitTurn(ctx, status) })
}

func (h *Hook) run(op string, f func(context.Context) error) {
	if h == nil || !h.s.Enabled() {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("vcs hook panicked", "op", op, "session", h.s.SessionID(),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), HookTimeout)
	defer cancel()
	if err := f(ctx); err != nil {
		h.log.Warn("vcs snapshot failed", "op", op, "session", h.s.SessionID(), "err", err)
	}
}
