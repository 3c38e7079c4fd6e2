package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zqagent/sidecar/acp"
	"github.com/zqagent/sidecar/oslocale"
)

// runACP is `sidecar acp`: the Agent Client Protocol on stdin/stdout for
// editors. The data dir's lock decides who owns the store, at start and
// whenever the owner changes:
//   - when it gets the lock it hosts the sessions itself and publishes its
//     endpoint like the WebSocket sidecar does, marked as one that hands the
//     data dir over: a desktop sidecar that starts later asks it to (the
//     shutdown method, over the endpoint), and it then closes its server
//     (a turn waiting for an answer is suspended, answerable later), gives
//     the lock up and joins the new owner;
//   - when another sidecar holds the lock it drives that one through the
//     endpoint file the holder published (endpoint.go), and when that one
//     goes away it takes the lock (or joins whoever took it).
//
// The editor's sessions stay open across these changes (acp.Options.
// Connect). stdout carries only the protocol; logs go to stderr.
func runACP(args []string) error {
	cfg, err := parseACPFlags(args)
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
	log, sec, err := begin(cfg, nil)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := os.Stdout
	os.Stdout = os.Stderr // nothing but the protocol goes to stdout
	o := &acpOwner{cfg: cfg, sec: sec, log: log}
	opts := acp.Options{Version: buildVersion(), Logger: log, Locale: oslocale.Get(), Connect: o.connect}
	return acp.Serve(ctx, opts, os.Stdin, out)
}

// acpFindTimeout bounds the search for the data dir's owner: the lock is
// held and no endpoint that answers is published for this long.
const acpFindTimeout = 30 * time.Second

// acpHandoverWait is how long, after handing the data dir over, sidecar acp
// waits for the new owner's endpoint before it tries the lock again.
const acpHandoverWait = 15 * time.Second

// acpPoll is the pace of that search.
const acpPoll = 50 * time.Millisecond

// acpOwner finds the backend of sidecar acp: the data dir's lock when it
// is free, else its owner's endpoint.
type acpOwner struct {
	cfg  config
	sec  startSecrets
	log  *slog.Logger
	last *acp.Endpoint // the owner joined last: gone when connect runs again
}

// connect is acp.Options.Connect.
func (o *acpOwner) connect(ctx context.Context, handover bool) (acp.Backend, error) {
	gone := o.last
	o.last = nil
	if handover {
		// The sidecar that asked for the data dir takes the lock and
		// publishes its endpoint; join it rather than race it for the lock.
		wait, cancel := context.WithTimeout(ctx, acpHandoverWait)
		defer cancel()
		for {
			if ep, err := readEndpoint(o.cfg.dataDir); err == nil {
				o.last = &ep
				o.log.Info("acp: joining the new owner of the data dir", "url", ep.URL)
				return acp.Backend{Join: &ep}, nil
			}
			if !pause(wait) {
				break
			}
		}
		if ctx.Err() != nil {
			return acp.Backend{}, ctx.Err()
		}
	}
	deadline, cancel := context.WithTimeout(ctx, acpFindTimeout)
	defer cancel()
	for {
		b, err := o.own(ctx)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, errLocked) {
			return acp.Backend{}, err
		}
		// The owner publishes its endpoint right after it listens: a
		// sidecar that is just starting gets a moment.
		ep, rerr := readEndpoint(o.cfg.dataDir)
		if rerr == nil && (gone == nil || ep != *gone) {
			o.last = &ep
			o.log.Info("acp: the data dir is owned by a running sidecar; joining it", "url", ep.URL)
			return acp.Backend{Join: &ep}, nil
		}
		if !pause(deadline) {
			if ctx.Err() != nil {
				return acp.Backend{}, ctx.Err()
			}
			if rerr == nil {
				rerr = errors.New("its endpoint does not answer")
			}
			return acp.Backend{}, fmt.Errorf("%w; and its endpoint: %w", err, rerr)
		}
	}
}

// pause waits acpPoll; false when ctx ended first.
func pause(ctx context.Context) bool {
	t := time.NewTimer(acpPoll)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// own takes the data dir's lock and returns the parts of a hosted server
// (openOwner), with the endpoint published; Release undoes it all.
// errLocked: another sidecar holds it.
func (o *acpOwner) own(ctx context.Context) (acp.Backend, error) {
	lock, err := acquireLock(lockPath(o.cfg))
	if err != nil {
		return acp.Backend{}, err
	}
	own, err := openOwner(ctx, o.cfg, o.sec, o.log, lock, 0)
	if err != nil {
		return acp.Backend{}, err
	}
	if err := own.publish(true); err != nil {
		own.ln.Close()
		own.Close()
		return acp.Backend{}, err
	}
	o.log.Info("acp: this process owns the data dir", "dir", o.cfg.dataDir)
	return acp.Backend{Listener: own.ln, Server: own.serverOptions(), Release: own.Close}, nil
}
