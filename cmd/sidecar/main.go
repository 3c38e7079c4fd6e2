// Command sidecar is the zqagent sidecar: a desktop shell spawns it, reads
// the one ready line it prints on stdout, and drives agent sessions over the
// local WebSocket named there (see ui-protocol.md). main only wires and
// waits: flags, secrets (secrets.go), lock file (lock.go), what the data
// dir's owner holds (own.go: store, terminals, keychain, listener), the
// endpoint file for the other front door (endpoint.go), server; then it
// waits for stdin EOF, SIGTERM/SIGINT or the shutdown method and closes
// everything within a bounded time. `sidecar acp` (acp.go) is the same
// wiring (own.go) behind the Agent Client Protocol on stdio, for editors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/zqagent/sidecar/ipc"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

// shutdownTimeout bounds the graceful exit.
const shutdownTimeout = 10 * time.Second

type config struct {
	showVersion    bool
	dataDir        string
	port           int
	allowOrigins   []string
	logLevel       slog.Level
	keyringService string
	auditLogDir    string
	secretsStdin   bool
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func parseFlags(args []string) (config, error) { return parseFlagsOf(args, usage) }

// parseACPFlags parses sidecar acp's flags (the same), with its own --help.
func parseACPFlags(args []string) (config, error) { return parseFlagsOf(args, acpUsage) }

func parseFlagsOf(args []string, usage func(*flag.FlagSet, io.Writer) func()) (config, error) {
	fs := flag.NewFlagSet("sidecar", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // --help prints the usage on stdout (below); errors say "see --help"
	var c config
	var origins stringList
	var level string
	def := ""
	if d, err := os.UserConfigDir(); err == nil {
		def = filepath.Join(d, "zqagent")
	}
	fs.StringVar(&c.dataDir, "data-dir", def, "data directory (database, sessions, lock file)")
	fs.IntVar(&c.port, "port", 0, "port on 127.0.0.1 (0 = any free port)")
	fs.Var(&origins, "allow-origin", "an Origin allowed to connect (repeatable): an origin (http://localhost:5173), scheme://* for a custom scheme, or a preset: electron (app://*; a file:// page sends Origin null, never allowed), tauri (tauri://localhost, http(s)://tauri.localhost)")
	fs.StringVar(&level, "log-level", "info", "log level: debug, info, warn or error (logs go to stderr)")
	fs.StringVar(&c.keyringService, "keyring-service", "zqagent", "OS keychain service name of the API keys")
	fs.StringVar(&c.auditLogDir, "audit-log-dir", os.Getenv("ZQAGENT_AUDIT_LOG_DIR"), "write an audit log of every model request here, one folder per day (keys redacted); off when empty (env ZQAGENT_AUDIT_LOG_DIR)")
	fs.BoolVar(&c.showVersion, "version", false, "print the version and exit")
	fs.BoolVar(&c.secretsStdin, "secrets-stdin", false, `read the token and API keys from the first line of stdin, {"token":"…","keys":{"openai":"sk-…"}}, instead of the environment`)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)()
			return config{}, err
		}
		return config{}, fmt.Errorf("%w (see sidecar --help)", err)
	}
	if c.showVersion {
		return c, nil
	}
	if c.dataDir == "" {
		return config{}, errors.New("no --data-dir and no user config directory")
	}
	if c.port < 0 || c.port > 65535 {
		return config{}, fmt.Errorf("--port %d out of range", c.port)
	}
	if err := c.logLevel.UnmarshalText([]byte(level)); err != nil {
		return config{}, fmt.Errorf("--log-level: %w", err)
	}
	var err error
	if c.allowOrigins, err = wsrpc.ExpandOrigins(origins); err != nil {
		return config{}, fmt.Errorf("--allow-origin: %w", err)
	}
	return c, nil
}

func main() {
	err := run(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return // --help: the usage went to stdout
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidecar:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "acp" {
		return runACP(args[1:])
	}
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	if cfg.showVersion {
		fmt.Println(buildVersion())
		return nil
	}
	log, sec, err := begin(cfg, os.Stdin)
	if err != nil {
		return err
	}
	prof := startProfiles(log)
	defer prof.stopCPU()
	lock, err := acquireLock(lockPath(cfg))
	if errors.Is(err, errLocked) {
		lock, err = takeOverFromACP(log, cfg.dataDir, err)
	}
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	own, err := openOwner(ctx, cfg, sec, log, lock, cfg.port)
	if err != nil {
		return err
	}
	defer own.Close()
	shutdown := make(chan struct{})
	opts := own.serverOptions()
	opts.Token = sec.token
	opts.AllowOrigins = cfg.allowOrigins
	opts.SecurityLog = os.Stderr // refused upgrades, one JSON line each
	opts.OnShutdown = func() { close(shutdown) }
	srv, err := ipc.New(opts)
	if err != nil {
		own.ln.Close()
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(own.ln) }()

	if err := printReady(os.Stdout, own.port(), sec.token); err != nil {
		return err
	}
	// Nothing but the ready line ever goes to stdout.
	os.Stdout = os.Stderr
	if err := own.publish(false); err != nil {
		// The shell is served; only sidecar acp cannot join this process.
		log.Error("publish the endpoint for sidecar acp", "err", err)
	}
	// What start-up allocated and dropped (package initialisation alone is
	// ~2 MB: a JSON Schema library compiles its meta-schemas) would stay in
	// the idle process, as the heap is too small for a collection to run:
	// return it to the OS once, off the path of the first requests.
	idleGC := time.AfterFunc(startupGCDelay, debug.FreeOSMemory)
	defer idleGC.Stop()

	stdinEOF := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns at EOF: the parent is gone
		close(stdinEOF)
	}()
	select {
	case <-stdinEOF:
		log.Info("stdin closed; exiting")
	case <-ctx.Done():
		log.Info("signal; exiting")
	case <-shutdown:
		log.Info("shutdown requested; exiting")
	case err := <-served:
		log.Error("server stopped", "err", err)
	}
	prof.writeHeap()
	cctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Close(cctx); err != nil {
		log.Warn("close server", "err", err)
	}
	own.Close()
	return nil
}

// startupGCDelay is when start-up's garbage is returned to the OS.
const startupGCDelay = 2 * time.Second

// readyLine is the handshake printed once on stdout.
type readyLine = protocol.ReadyLine

func printReady(w io.Writer, port int, token string) error {
	b, err := json.Marshal(readyLine{
		Event:    "ready",
		URL:      fmt.Sprintf("ws://127.0.0.1:%d/rpc", port),
		Token:    token,
		PID:      os.Getpid(),
		Version:  buildVersion(),
		Protocol: protocol.Version,
	})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
