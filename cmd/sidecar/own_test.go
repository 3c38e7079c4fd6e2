package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/store"
)

// TestOwnerUndoesAll: the shared start-up wiring holds the data dir (its
// lock, the store's, the endpoint file) while open, and gives it all back
// on Close and on a failure midway (the port is taken after the store was
// opened), so that the next owner (a restarted sidecar, sidecar acp taking
// over) can open it.
func TestOwnerUndoesAll(t *testing.T) {
	ctx := context.Background()
	cfg := config{dataDir: t.TempDir(), keyringService: "zqagent-test"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	free := func() {
		t.Helper()
		l, err := acquireLock(lockPath(cfg))
		require.NoError(t, err, "the sidecar lock is free")
		l.release()
		st, err := store.Open(ctx, cfg.dataDir, store.Options{})
		require.NoError(t, err, "the store is free")
		require.NoError(t, st.Close())
		require.NoFileExists(t, filepath.Join(cfg.dataDir, endpointFile))
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	lock, err := acquireLock(lockPath(cfg))
	require.NoError(t, err)
	_, err = openOwner(ctx, cfg, startSecrets{}, log, lock, busy.Addr().(*net.TCPAddr).Port)
	require.ErrorContains(t, err, "listen")
	free()

	lock, err = acquireLock(lockPath(cfg))
	require.NoError(t, err)
	own, err := openOwner(ctx, cfg, startSecrets{}, log, lock, 0)
	require.NoError(t, err)
	require.NoError(t, own.publish(true))
	ep, err := readEndpointLine(cfg.dataDir)
	require.NoError(t, err)
	require.True(t, ep.Handover)
	require.Equal(t, os.Getpid(), ep.PID)
	_, err = acquireLock(lockPath(cfg))
	require.ErrorIs(t, err, errLocked)
	_, err = store.Open(ctx, cfg.dataDir, store.Options{})
	require.ErrorIs(t, err, store.ErrLocked)
	opts := own.serverOptions()
	require.Same(t, own.store, opts.Store)
	require.Equal(t, own.peerToken, opts.PeerToken)
	require.NoError(t, own.ln.Close())
	own.Close()
	free()
}
