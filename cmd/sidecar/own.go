package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/zqagent/sidecar/ipc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/terminal"
)

// This file is the start-up wiring that `sidecar` (main.go) and `sidecar
// acp` (acp.go) share: the logger and secrets, the data dir, and what the
// owner of a data dir holds once it has the lock.

// begin sets up the logger (stderr, cfg's level) and takes the start
// secrets (from stdin with --secrets-stdin, else the environment), then
// creates the data dir.
func begin(cfg config, stdin io.Reader) (*slog.Logger, startSecrets, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	slog.SetDefault(log)
	sec, err := takeSecrets(log, cfg.secretsStdin, stdin)
	if err != nil {
		return nil, startSecrets{}, err
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return nil, startSecrets{}, fmt.Errorf("data dir: %w", err)
	}
	return log, sec, nil
}

// lockPath is the data dir's sidecar lock file.
func lockPath(cfg config) string { return filepath.Join(cfg.dataDir, lockName) }

// owner is what the process that holds a data dir's lock runs on: the
// store (interrupted turns settled), the terminals, the keychain, a
// listener on 127.0.0.1 and the peer token of the endpoint file. Close
// undoes it all, the lock last.
type owner struct {
	cfg       config
	log       *slog.Logger
	store     *store.Store
	terms     *terminal.Manager
	keys      *keychain.Keyring
	ln        net.Listener
	peerToken string
	undo      []func() // run in reverse by Close
}

// openOwner opens the owner's parts with lock held (it takes it over:
// Close releases it, and so does a failed openOwner). port 0 is any free
// port.
func openOwner(ctx context.Context, cfg config, sec startSecrets, log *slog.Logger, lock *fileLock, port int) (_ *owner, err error) {
	o := &owner{cfg: cfg, log: log, undo: []func(){lock.release}}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	if o.store, err = store.Open(ctx, cfg.dataDir, store.Options{}); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	o.undo = append(o.undo, func() {
		if err := o.store.Close(); err != nil {
			log.Warn("close store", "err", err)
		}
	})
	o.terms = terminal.NewManager(terminal.Options{Logger: log})
	o.undo = append(o.undo, func() {
		if err := o.terms.Close(); err != nil {
			log.Warn("close terminals", "err", err)
		}
	})
	o.keys = keychain.New(cfg.keyringService)
	o.keys.SetStartKeys(sec.keys, sec.env)
	o.undo = append(o.undo, func() { _ = o.keys.Close() })
	if o.ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if o.peerToken, err = newPeerToken(cfg.dataDir); err != nil {
		o.ln.Close()
		return nil, err
	}
	return o, nil
}

// port is the listener's.
func (o *owner) port() int { return o.ln.Addr().(*net.TCPAddr).Port }

// serverOptions are the options of the owner's server that both front
// doors share; the WebSocket sidecar adds its token, origins and shutdown.
func (o *owner) serverOptions() ipc.Options {
	return ipc.Options{
		Store:          o.store,
		PeerToken:      o.peerToken,
		Version:        buildVersion(),
		DataDir:        o.cfg.dataDir,
		KeyringService: o.cfg.keyringService,
		Keyring:        o.keys,
		Terminals:      o.terms,
		AuditLogDir:    o.cfg.auditLogDir,
		Logger:         o.log,
	}
}

// publish writes the endpoint file (endpoint.go) for the other front
// door; Close removes it first, so that nobody joins a closing owner.
// handover marks a sidecar acp, which lets the data dir go when asked.
func (o *owner) publish(handover bool) error {
	unpublish, err := publishEndpoint(o.cfg.dataDir, o.port(), o.peerToken, handover)
	if err != nil {
		return err
	}
	o.undo = append(o.undo, unpublish)
	return nil
}

// Close undoes openOwner and publish in reverse order: the endpoint file,
// the keychain, the terminals, the store, then the lock. The server must
// be closed before.
func (o *owner) Close() {
	for i := len(o.undo) - 1; i >= 0; i-- {
		o.undo[i]()
	}
	o.undo = nil
}
