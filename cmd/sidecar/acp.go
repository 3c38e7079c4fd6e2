package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/zqagent/sidecar/acp"
	"github.com/zqagent/sidecar/ipc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/terminal"
)

// runACP is `sidecar acp`: the Agent Client Protocol on stdin/stdout for
// editors. The data dir's lock decides who owns the store: when it gets the
// lock it hosts the sessions itself and publishes its endpoint like the
// WebSocket sidecar does; when another sidecar (WebSocket or ACP) holds it,
// it drives that one through the endpoint file the holder published
// (endpoint.go). stdout carries only the protocol; logs go to stderr.
func runACP(args []string) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	if cfg.showVersion {
		fmt.Println(buildVersion())
		return nil
	}
	if cfg.secretsStdin {
		return errors.New("acp: --secrets-stdin is not available: stdin carries the protocol (use the keychain or *_API_KEY)")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	slog.SetDefault(log)
	sec, err := takeSecrets(log, false, nil)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := os.Stdout
	os.Stdout = os.Stderr // nothing but the protocol goes to stdout
	opts := acp.Options{Version: buildVersion(), Logger: log}

	lock, err := acquireLock(filepath.Join(cfg.dataDir, "sidecar.lock"))
	if errors.Is(err, errLocked) {
		// The owner publishes its endpoint right after it listens: a
		// sidecar that is just starting gets a moment.
		ep, rerr := readEndpoint(cfg.dataDir)
		for i := 0; rerr != nil && i < 20; i++ {
			time.Sleep(100 * time.Millisecond)
			ep, rerr = readEndpoint(cfg.dataDir)
		}
		if rerr != nil {
			return fmt.Errorf("%w; and its endpoint: %w", err, rerr)
		}
		log.Info("acp: the data dir is owned by a running sidecar; joining it", "url", ep.URL)
		opts.Join = &ep
		return acp.Serve(ctx, opts, os.Stdin, out)
	}
	if err != nil {
		return err
	}
	defer lock.release()
	st, err := store.Open(ctx, cfg.dataDir, store.Options{})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	if err := recoverInterrupted(ctx, st); err != nil {
		return err
	}
	terms := terminal.NewManager(terminal.Options{Logger: log})
	defer terms.Close()
	kr := keychain.New(cfg.keyringService)
	kr.SetStartKeys(sec.keys, sec.env)
	defer kr.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	peerToken, err := newPeerToken(cfg.dataDir)
	if err != nil {
		ln.Close()
		return err
	}
	unpublish, err := publishEndpoint(cfg.dataDir, ln.Addr().(*net.TCPAddr).Port, peerToken)
	if err != nil {
		ln.Close()
		return err
	}
	defer unpublish()
	opts.Listener = ln
	opts.Server = ipc.Options{
		PeerToken:      peerToken,
		Store:          st,
		Version:        buildVersion(),
		DataDir:        cfg.dataDir,
		KeyringService: cfg.keyringService,
		Keyring:        kr,
		Terminals:      terms,
		AuditLogDir:    cfg.auditLogDir,
		Logger:         log,
	}
	return acp.Serve(ctx, opts, os.Stdin, out)
}
