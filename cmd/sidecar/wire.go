package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/zqagent/sidecar/store"
)

// recoverInterrupted marks the sessions a dead process left running as
// interrupted; their pending requests stay answerable.
func recoverInterrupted(ctx context.Context, st *store.Store) error {
	ids, err := st.RecoverInterrupted(ctx)
	if err != nil {
		return fmt.Errorf("recover interrupted sessions: %w", err)
	}
	if len(ids) > 0 {
		slog.Info("sessions interrupted by the last exit", "sessions", ids)
	}
	return nil
}
