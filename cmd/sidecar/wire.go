package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zqagent/sidecar/keychain"
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

// apiKeySource reads the OpenAI key from the keychain, then the
// environment, at each use ("" when none is configured).
func apiKeySource(kr *keychain.Keyring) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		k, err := kr.Resolve(ctx, "openai")
		if errors.Is(err, keychain.ErrNotFound) || errors.Is(err, keychain.ErrUnavailable) {
			return "", nil
		}
		return k, err
	}
}
