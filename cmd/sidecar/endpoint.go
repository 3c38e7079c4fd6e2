package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/zqagent/sidecar/acp"
	"github.com/zqagent/sidecar/atomicfile"
	"github.com/zqagent/sidecar/ipc/client"
)

// endpointFile is where the data dir's owner publishes its WebSocket for
// the other front door: {"url","token","pid","handover"}, mode 0600, in the
// 0700 data dir. The token is a peer token made for it (ipc.Options.
// PeerToken), never the shell's. Only the lock holder writes it. handover
// is true when the owner is a sidecar acp, which lets the data dir go when
// a desktop sidecar asks (the shutdown method over this endpoint) and joins
// it; a desktop sidecar owner never does (the shell's sessions are its).
const endpointFile = "sidecar.endpoint"

type endpointLine struct {
	acp.Endpoint
	PID      int  `json:"pid"`
	Handover bool `json:"handover,omitempty"`
}

// newPeerToken makes the peer token of the endpoint file and removes a
// file a previous owner left (it names a dead process), so that nothing
// stale is read until publishEndpoint writes the new one.
func newPeerToken(dataDir string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	if err := os.Remove(filepath.Join(dataDir, endpointFile)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return "", fmt.Errorf("endpoint file: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// publishEndpoint writes the endpoint file and returns a function that
// removes it; handover marks sidecar acp's (it lets the data dir go when
// asked). main calls it after the ready line: the file is for the other
// front door (sidecar acp waits for it), not on the shell's path.
func publishEndpoint(dataDir string, port int, tok string, handover bool) (func(), error) {
	data, err := json.Marshal(endpointLine{Endpoint: acp.Endpoint{URL: fmt.Sprintf("ws://127.0.0.1:%d/rpc", port), Token: tok}, PID: os.Getpid(), Handover: handover})
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return nil, fmt.Errorf("endpoint file: %w", err)
	}
	defer root.Close()
	if err := atomicfile.Write(root, endpointFile, data, 0o600, atomicfile.SetMode); err != nil {
		return nil, fmt.Errorf("endpoint file: %w", err)
	}
	path := filepath.Join(dataDir, endpointFile)
	return func() { os.Remove(path) }, nil
}

// readEndpoint reads the owner's endpoint file.
func readEndpoint(dataDir string) (acp.Endpoint, error) {
	e, err := readEndpointLine(dataDir)
	return e.Endpoint, err
}

func readEndpointLine(dataDir string) (endpointLine, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, endpointFile))
	if err != nil {
		return endpointLine{}, fmt.Errorf("read endpoint file: %w", err)
	}
	var e endpointLine
	if err := json.Unmarshal(data, &e); err != nil || e.URL == "" || e.Token == "" {
		return endpointLine{}, fmt.Errorf("endpoint file %s is malformed", endpointFile)
	}
	return e, nil
}

// handoverTimeout bounds a desktop sidecar's wait for a sidecar acp to let
// the data dir go (its server closes within ipc's own bound, 10 s).
const handoverTimeout = 20 * time.Second

// takeOverFromACP is the desktop sidecar's answer to a locked data dir:
// when the owner is a sidecar acp (its endpoint says handover), it asks it
// to let the data dir go (the shutdown method over its endpoint: the acp
// process then closes its server, gives the lock up and joins this one)
// and takes the lock. Any other owner: locked is the error, as before.
func takeOverFromACP(log *slog.Logger, dataDir string, locked error) (*fileLock, error) {
	ep, err := readEndpointLine(dataDir)
	if err != nil || !ep.Handover {
		return nil, locked
	}
	ctx, cancel := context.WithTimeout(context.Background(), handoverTimeout)
	defer cancel()
	path := filepath.Join(dataDir, "sidecar.lock")
	asked := ""
	for {
		// Another sidecar acp that drove the one asked may take the lock
		// first: it publishes its endpoint, and is asked in turn.
		if ep.Handover && ep.Token != asked {
			log.Info("the data dir is owned by sidecar acp; asking it to hand it over", "pid", ep.PID)
			if err := askHandover(ctx, ep.Endpoint); err != nil {
				return nil, fmt.Errorf("%w; and asking it to hand the data dir over: %w", locked, err)
			}
			asked = ep.Token
		}
		lock, err := acquireLock(path)
		if !errors.Is(err, errLocked) {
			return lock, err
		}
		t := time.NewTimer(acpPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w; it did not hand the data dir over within %s", err, handoverTimeout)
		}
		if e, rerr := readEndpointLine(dataDir); rerr == nil {
			ep = e
		}
	}
}

// askHandover calls shutdown on a sidecar acp owner: it lets the data dir go.
func askHandover(ctx context.Context, ep acp.Endpoint) error {
	c, err := client.Dial(ctx, ep.URL, ep.Token, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "sidecar", buildVersion(), false); err != nil {
		return err
	}
	return c.Call(ctx, "shutdown", map[string]any{}, nil)
}
