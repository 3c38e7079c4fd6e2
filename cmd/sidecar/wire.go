package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/store"
)

// recoverInterrupted settles the turns a dead process left running
// (backend.RecoverInterrupted: suspended when they wait for answers, else their
// one turn_end); queued turns stay queued and run when the server serves.
func recoverInterrupted(ctx context.Context, st *store.Store) error {
	ids, err := backend.RecoverInterrupted(ctx, st)
	if err != nil {
		return fmt.Errorf("recover interrupted sessions: %w", err)
	}
	if len(ids) > 0 {
		slog.Info("sessions interrupted by the last exit", "sessions", ids)
	}
	return nil
}
