//go:build linux

package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/mcp/oauthtest"
)

// mcpServerState is one server of mcp.list.
type mcpServerState struct {
	Name      string   `json:"name"`
	State     string   `json:"state"`
	LastError string   `json:"lastError"`
	ToolNames []string `json:"toolNames"`
}

// waitMCP polls mcp.list until the server satisfies ok.
func waitMCP(t *testing.T, c *client.Client, projectID, name, what string, ok func(mcpServerState) bool) mcpServerState {
	t.Helper()
	var last mcpServerState
	require.Eventually(t, func() bool {
		var res struct {
			Servers []mcpServerState `json:"servers"`
		}
		require.NoError(t, c.Call(tctx(t), "mcp.list", map[string]string{"projectId": projectID}, &res))
		for _, s := range res.Servers {
			if s.Name == name {
				last = s
				return ok(s)
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "%s: %s never %s (last: %+v)", name, what, what, last)
	return last
}

func stateIs(want string) func(mcpServerState) bool {
	return func(s mcpServerState) bool { return s.State == want }
}

// TestE2EMCPOAuthSignIn drives the real binary over the documented
// protocol against a local authorization server and an OAuth-protected MCP
// server: the server is needs_auth; a refused consent is reported (still
// needs_auth); mcp.login's URL, followed like a browser, signs in after a
// forged callback with a wrong state was refused; the server connects and
// a turn calls its tool; the tokens are in the OS keychain and nowhere in
// the data dir (database, event log) or the sidecar's log; after a
// restart with the stored token expired it is refreshed and the server
// connects; mcp.logout removes the keychain entry and the server is
// needs_auth again.
func TestE2EMCPOAuthSignIn(t *testing.T) {
	if os.Getenv("ZQAGENT_KEYRING_TEST") != "1" {
		t.Skip("needs the real keychain: run scripts/with-keyring.sh go test ./cmd/sidecar/ -run MCPOAuth")
	}
	as := oauthtest.New(oauthtest.Options{})
	defer as.Close()
	service := "zqagent-e2e-mcp-" + randHex(t, 6)
	// readKeychain reads the sidecar's keychain entry afresh (a Keyring
	// caches what it read).
	readKeychain := func(account string) (string, error) {
		kr := keychain.New(service)
		defer kr.Close()
		return kr.Get(tctx(t), account)
	}

	script := writeScript(t,
		calls("", toolCall("w1", "mcp__remote__whoami", map[string]any{})),
		text("asked"),
	)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	start := func() (*proc, *client.Client, string) {
		p := spawnWith(t, dataDir, spawnOptions{env: append(os.Environ(), "ZQAGENT_SCRIPT="+script), args: []string{"--keyring-service", service}})
		c := p.connect(t)
		pid, err := c.OpenProject(tctx(t), projDir)
		require.NoError(t, err)
		return p, c, pid
	}
	// The project's config names the server; the user trusts it.
	require.NoError(t, os.MkdirAll(filepath.Join(projDir, ".agent"), 0o755))
	cfg, err := json.Marshal(map[string]any{"servers": []any{map[string]any{"name": "remote", "type": "http", "url": as.URL()}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(projDir, ".agent", "mcp.json"), cfg, 0o644))
	p, c, pid := start()
	var list struct {
		Servers []struct{ Name, Hash string } `json:"servers"`
	}
	require.NoError(t, c.Call(tctx(t), "mcp.list", map[string]string{"projectId": pid}, &list))
	require.Equal(t, "remote", list.Servers[0].Name)
	require.NoError(t, c.Call(tctx(t), "mcp.trust", map[string]any{"projectId": pid, "name": "remote", "hash": list.Servers[0].Hash}, nil))
	waitMCP(t, c, pid, "remote", "needs_auth", stateIs("needs_auth"))

	login := func() string {
		var res struct {
			AuthorizationURL string `json:"authorizationUrl"`
		}
		require.NoError(t, c.Call(tctx(t), "mcp.login", map[string]any{"projectId": pid, "name": "remote"}, &res))
		u, err := url.Parse(res.AuthorizationURL)
		require.NoError(t, err)
		asURL, _ := url.Parse(as.AS.URL)
		require.Equal(t, asURL.Host, u.Host, "the authorization server's host, from the metadata")
		return res.AuthorizationURL
	}

	// A refused consent: reported, still needs_auth, nothing stored.
	as.Deny.Store(true)
	status, body, err := oauthtest.Browse(tctx(t), login())
	require.NoError(t, err)
	require.Equal(t, 400, status, body)
	st := waitMCP(t, c, pid, "remote", "reports the refusal", func(s mcpServerState) bool { return strings.Contains(s.LastError, "access_denied") })
	require.Equal(t, "needs_auth", st.State)
	_, err = readKeychain(mcp.SignInAccount("remote", as.URL()))
	require.ErrorIs(t, err, keychain.ErrNotFound)

	// A forged callback with a wrong state is refused; the real answer
	// signs in.
	as.Deny.Store(false)
	authURL := login()
	u, _ := url.Parse(authURL)
	code, err := oauthtest.Callback(tctx(t), u.Query().Get("redirect_uri"), url.Values{"state": {"forged"}, "code": {"stolen"}})
	require.NoError(t, err)
	require.Equal(t, 400, code)
	status, body, err = oauthtest.Browse(tctx(t), authURL)
	require.NoError(t, err)
	require.Equal(t, 200, status, body)
	st = waitMCP(t, c, pid, "remote", "connected", stateIs("connected"))
	require.Contains(t, st.ToolNames, "mcp__remote__whoami")

	// Its tool serves a turn.
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "who is it")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "permission_required")
	perm := dataOf(t, evs[len(evs)-1])
	require.NoError(t, c.Respond(tctx(t), sid, perm["requestId"].(string), map[string]string{"outcome": "once"}))
	evs = untilType(t, c, sid, "turn_end")
	fin := ofType(evs, "tool_finished")
	require.Len(t, fin, 1)
	require.Contains(t, dataOf(t, fin[0])["result_preview"], oauthtest.ToolText)

	account := mcp.SignInAccount("remote", as.URL())
	stored, err := readKeychain(account)
	require.NoError(t, err)
	first := as.Issued()
	for _, tok := range first {
		require.Contains(t, stored, tok)
	}

	// Restart with the stored token expired (and refused by the server):
	// it is refreshed before the server is contacted.
	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(stored), &e))
	e["token"].(map[string]any)["expires_at"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	kr := keychain.New(service)
	require.NoError(t, kr.Set(tctx(t), account, string(b)))
	require.NoError(t, kr.Close())
	as.ExpireAccessTokens()
	logs := p.stderr.String()
	p, c, pid = start()
	waitMCP(t, c, pid, "remote", "connected after the refresh", stateIs("connected"))
	require.Equal(t, 1, as.Grants("refresh_token"))

	// mcp.logout: the keychain entry goes; needs_auth again.
	var out struct {
		Server mcpServerState `json:"server"`
	}
	require.NoError(t, c.Call(tctx(t), "mcp.logout", map[string]any{"name": "remote"}, &out))
	require.Equal(t, "needs_auth", out.Server.State)
	_, err = readKeychain(account)
	require.ErrorIs(t, err, keychain.ErrNotFound)

	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(15*time.Second))
	logs += p.stderr.String()
	require.Contains(t, logs, "mcp signed in")
	issued := as.Issued()
	require.Greater(t, len(issued), len(first))
	require.NoError(t, filepath.WalkDir(dataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, tok := range issued {
			require.NotContains(t, string(data), tok, "a token in %s", path)
		}
		return nil
	}))
	for _, tok := range issued {
		require.NotContains(t, logs, tok, "a token in the sidecar's log")
	}
}
