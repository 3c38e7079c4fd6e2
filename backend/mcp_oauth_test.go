package backend

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/mcp/oauthtest"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMCPSignInKeychainOnly: through the backend with the real OS keychain,
// a protected server is needs_auth, mcp.login (no projectId: the one open
// project with that server) signs in through the browser, the server
// connects; the tokens are in the keychain and nowhere in the database
// files, the log or the notifications; mcp.logout removes the keychain
// entry and the server is needs_auth again.
func TestMCPSignInKeychainOnly(t *testing.T) {
	if os.Getenv("ZQAGENT_KEYRING_TEST") != "1" {
		t.Skip("real keychain tests need ZQAGENT_KEYRING_TEST=1: run scripts/with-keyring.sh go test ./backend/ -run MCPSignIn")
	}
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()

	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	st, err := store.Open(t.Context(), dataDir, store.Options{})
	require.NoError(t, err)
	rnd := make([]byte, 6)
	_, _ = rand.Read(rnd)
	kr := keychain.New("zqagent-test-mcp-" + hex.EncodeToString(rnd))
	var logs lockedBuffer
	var notesMu sync.Mutex
	var notes []byte
	b, err := New(Options{
		Store: st, DataDir: dataDir, Keyring: kr, Envelope: wsrpc.NotificationEnvelope,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Broadcast: func(method string, params any) {
			p, _ := json.Marshal(params)
			notesMu.Lock()
			notes = append(append(notes, method...), p...)
			notesMu.Unlock()
		},
	})
	require.NoError(t, err)
	closed := false
	closeAll := func() {
		if closed {
			return
		}
		closed = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, b.Close(ctx))
		require.NoError(t, st.Close())
		require.NoError(t, kr.Close())
	}
	defer closeAll()

	p := protocol.Project{ProjectID: openWithServer(t, b, filepath.Join(dir, "proj"), as.URL())}
	stateIs := func(want string) func() bool {
		return func() bool {
			l, err := b.MCPList(t.Context(), protocol.ProjectIDParams{ProjectID: p.ProjectID})
			require.NoError(t, err)
			for _, s := range l.Servers {
				if s.Name == "remote" {
					return s.State == want
				}
			}
			return false
		}
	}
	require.Eventually(t, stateIs(mcp.StateNeedsAuth), 20*time.Second, 10*time.Millisecond)

	res, err := b.LoginMCP(t.Context(), protocol.MCPLoginParams{Name: "remote"})
	require.NoError(t, err)
	status, body, err := oauthtest.Browse(t.Context(), res.AuthorizationURL)
	require.NoError(t, err)
	require.Equal(t, 200, status, body)
	require.Eventually(t, stateIs(mcp.StateConnected), 20*time.Second, 10*time.Millisecond)

	account := mcp.SignInAccount("remote", as.URL())
	stored, err := kr.Get(t.Context(), account)
	require.NoError(t, err)
	issued := as.Issued()
	require.Len(t, issued, 2)
	for _, tok := range issued {
		require.Contains(t, stored, tok, "the keychain holds the sign-in")
	}

	// mcp.logout: the keychain entry goes, the server wants a sign-in again.
	out, err := b.LogoutMCP(t.Context(), protocol.MCPLoginParams{ProjectID: p.ProjectID, Name: "remote"})
	require.NoError(t, err)
	require.Equal(t, mcp.StateNeedsAuth, out.Server.State)
	_, err = kr.Get(t.Context(), account)
	require.ErrorIs(t, err, keychain.ErrNotFound)

	closeAll() // the store's files are complete once closed
	var files []string
	require.NoError(t, filepath.WalkDir(dataDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	}))
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, tok := range issued {
			require.NotContains(t, string(data), tok, "a token in %s", f)
		}
	}
	require.Contains(t, logs.String(), "mcp signed in")
	notesMu.Lock()
	defer notesMu.Unlock()
	require.Contains(t, string(notes), `"state":"connected"`)
	for _, tok := range issued {
		require.NotContains(t, logs.String(), tok, "a token in the log")
		require.NotContains(t, string(notes), tok, "a token in a notification")
	}
}

// openWithServer opens a project whose .agent/mcp.json has the http
// server "remote" at serverURL, trusted (as mcp.trust does).
func openWithServer(t *testing.T, b *Backend, proj, serverURL string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(proj, ".agent"), 0o755))
	cfg, _ := json.Marshal(map[string]any{"servers": []any{map[string]any{"name": "remote", "type": "http", "url": serverURL}}})
	require.NoError(t, os.WriteFile(filepath.Join(proj, ".agent", "mcp.json"), cfg, 0o644))
	p, err := b.OpenProject(t.Context(), protocol.ProjectOpenParams{Path: proj})
	require.NoError(t, err)
	l, err := b.MCPList(t.Context(), protocol.ProjectIDParams{ProjectID: p.ProjectID})
	require.NoError(t, err)
	for _, s := range l.Servers {
		if s.Name == "remote" {
			_, err = b.TrustMCP(t.Context(), protocol.MCPTrustParams{ProjectID: p.ProjectID, Name: "remote", Hash: s.Hash})
			require.NoError(t, err)
			return p.ProjectID
		}
	}
	t.Fatalf("no server remote: %+v", l.Servers)
	return ""
}

// TestMCPLoginWithoutKeyring: with no keychain there is no sign-in, and
// the error says the keychain is what is missing; an unknown server and a
// name two projects share are refused clearly.
func TestMCPLoginWithoutKeyring(t *testing.T) {
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	b := newTestBackend(t, nil)
	var ids []string
	for _, n := range []string{"a", "b"} {
		ids = append(ids, openWithServer(t, b, filepath.Join(t.TempDir(), n), as.URL()))
	}
	_, err := b.LoginMCP(t.Context(), protocol.MCPLoginParams{ProjectID: ids[0], Name: "remote"})
	require.ErrorIs(t, err, mcp.ErrNoSecrets)
	_, err = b.LoginMCP(t.Context(), protocol.MCPLoginParams{Name: "remote"})
	require.ErrorIs(t, err, protocol.ErrInvalidParams)
	require.Contains(t, err.Error(), "projectId")
	_, err = b.LoginMCP(t.Context(), protocol.MCPLoginParams{Name: "nope"})
	require.ErrorIs(t, err, ErrNotFound)
}
