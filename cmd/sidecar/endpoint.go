package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/zqagent/sidecar/acp"
	"github.com/zqagent/sidecar/tools/fs"
)

// endpointFile is where the data dir's owner publishes its WebSocket for
// the other front door (sidecar acp): {"url","token","pid"}, mode 0600, in
// the 0700 data dir. The token is a peer token made for it (ipc.Options.
// PeerToken), never the shell's. Only the lock holder writes it.
const endpointFile = "sidecar.endpoint"

type endpointLine struct {
	acp.Endpoint
	PID int `json:"pid"`
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
// removes it. main calls it after the ready line: the file is for the
// other front door (sidecar acp waits for it), not on the shell's path.
func publishEndpoint(dataDir string, port int, tok string) (func(), error) {
	data, err := json.Marshal(endpointLine{Endpoint: acp.Endpoint{URL: fmt.Sprintf("ws://127.0.0.1:%d/rpc", port), Token: tok}, PID: os.Getpid()})
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return nil, fmt.Errorf("endpoint file: %w", err)
	}
	defer root.Close()
	_ = root.Remove(endpointFile) // a new file gets 0600; WriteAtomic keeps an old one's mode
	if err := fs.WriteAtomic(root, endpointFile, data, 0o600); err != nil {
		return nil, fmt.Errorf("endpoint file: %w", err)
	}
	path := filepath.Join(dataDir, endpointFile)
	return func() { os.Remove(path) }, nil
}

// readEndpoint reads the owner's endpoint file.
func readEndpoint(dataDir string) (acp.Endpoint, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, endpointFile))
	if err != nil {
		return acp.Endpoint{}, fmt.Errorf("read endpoint file: %w", err)
	}
	var e endpointLine
	if err := json.Unmarshal(data, &e); err != nil || e.URL == "" || e.Token == "" {
		return acp.Endpoint{}, fmt.Errorf("endpoint file %s is malformed", endpointFile)
	}
	return e.Endpoint, nil
}
