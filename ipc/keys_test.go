package ipc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/protocol"
)

type keysStatusResult struct {
	Keys []protocol.KeyStatus `json:"keys"`
}

func keyStatusOf(t *testing.T, res keysStatusResult, provider string) protocol.KeyStatus {
	t.Helper()
	for _, k := range res.Keys {
		if k.Provider == provider {
			return k
		}
	}
	t.Fatalf("no status for %s in %+v", provider, res.Keys)
	return protocol.KeyStatus{}
}

func randomKey(t testing.TB, prefix string) string {
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return prefix + hex.EncodeToString(b)
}

// realKeyring returns a keyring on the real OS keychain under a service name
// of its own, or skips the test when no real keychain is set up.
func realKeyring(t *testing.T) *keychain.Keyring {
	t.Helper()
	if os.Getenv("ZQAGENT_KEYRING_TEST") != "1" {
		t.Skip("real keychain tests need ZQAGENT_KEYRING_TEST=1: run scripts/with-keyring.sh go test ./ipc/ -run Keys")
	}
	kr := keychain.New(randomKey(t, "zqagent-ipc-test-"))
	t.Cleanup(func() { require.NoError(t, kr.Close()) })
	return kr
}

func TestKeysSetValidatesAndNeverEchoesTheKey(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	bad := "sk-bad-\n-key-material"
	cases := []struct {
		params map[string]any
		field  string
	}{
		{map[string]any{"apiKey": "sk-x"}, "provider"},
		{map[string]any{"provider": "openai"}, "apiKey"},
		{map[string]any{"provider": "openai", "apiKey": bad}, "apiKey"},
		{map[string]any{"provider": "openai", "apiKey": " sk-padded-material "}, "apiKey"},
		{map[string]any{"provider": "bad\tname", "apiKey": "sk-ok-material"}, "provider"},
	}
	for _, tc := range cases {
		ce := callErr(t, c, "keys.set", tc.params)
		require.Equal(t, wsrpc.CodeInvalidParams, ce.Code, "%v", tc.params)
		require.Contains(t, ce.Message, tc.field)
		require.NotContains(t, ce.Message, "material", "an error never quotes the key")
	}
}

func TestKeysWithoutKeyring(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-deepseek-env-material")
	t.Setenv("OPENAI_API_KEY", "")
	ts := startServer(t) // no Keyring
	c := ts.dial(t)
	ce := callErr(t, c, "keys.set", map[string]any{"provider": "openai", "apiKey": "sk-some-key-material"})
	require.Equal(t, wsrpc.CodeConfig, ce.Code)
	require.Contains(t, ce.Message, "OPENAI_API_KEY", "the remedy names the variable")
	require.NotContains(t, ce.Message, "material")
	require.Equal(t, wsrpc.CodeConfig, callErr(t, c, "keys.delete", map[string]any{"provider": "openai"}).Code)

	var res keysStatusResult
	require.NoError(t, c.Call(tctx(t), "keys.status", nil, &res))
	ds := keyStatusOf(t, res, "deepseek")
	require.True(t, ds.Configured)
	require.Equal(t, keychain.SourceEnv, ds.Source)
	require.Equal(t, "DEEPSEEK_API_KEY", ds.EnvVar)
	oa := keyStatusOf(t, res, "openai")
	require.False(t, oa.Configured)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "material", "a key is never returned")
}

func TestKeysUnavailableKeychain(t *testing.T) {
	if os.Getenv("ZQAGENT_KEYRING_TEST") == "1" {
		t.Skip("a session bus is up in this process; cmd/sidecar covers the unreachable Secret Service with a spawned sidecar")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
	t.Setenv("OPENAI_API_KEY", "sk-env-fallback-material")
	kr := keychain.New(randomKey(t, "zqagent-ipc-test-"))
	defer kr.Close()
	f := newFakeOpenAI(t)
	t.Setenv("OPENAI_BASE_URL", f.baseURL())
	t.Setenv("OPENAI_FORCE_API_MODE", "chat")
	ts := startServer(t, withModelProviders(), withKeyring(kr))
	c := ts.dial(t)
	ce := callErr(t, c, "keys.set", map[string]any{"provider": "openai", "apiKey": "sk-new-key-material"})
	require.Equal(t, wsrpc.CodeConfig, ce.Code)
	require.Contains(t, ce.Message, "OS keychain not available")
	require.Contains(t, ce.Message, "set OPENAI_API_KEY", "the remedy")
	require.NotContains(t, ce.Message, "material")

	// The environment's key still works for a turn.
	sid := ts.session(t, c, map[string]any{"model": "m-small"})
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	require.Equal(t, "hi from fake", textOf(collectTurn(t, c, sid)))
	require.Equal(t, "Bearer sk-env-fallback-material", f.lastAuth())
}

// TestKeysRealKeychainRotation runs against the real Secret Service: set →
// status → a turn carries the key → a new key applies to the next turn
// without a restart → delete → status.
func TestKeysRealKeychainRotation(t *testing.T) {
	kr := realKeyring(t)
	f := newFakeOpenAI(t)
	ts := startServer(t, withModelProviders(), withKeyring(kr))
	c := ts.dial(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "ktest", "baseUrl": f.baseURL(), "apiMode": "chat", "defaultModel": "m-small"}, nil))
	t.Setenv("KTEST_API_KEY", "")

	key1, key2 := randomKey(t, "sk-one-"), randomKey(t, "sk-two-")
	var st protocol.KeyStatus
	require.NoError(t, c.Call(tctx(t), "keys.set", map[string]any{"provider": "ktest", "apiKey": key1}, &st))
	t.Cleanup(func() { _ = kr.Delete(context.Background(), "ktest") })
	require.True(t, st.Configured)
	require.Equal(t, keychain.SourceKeychain, st.Source)
	var res keysStatusResult
	require.NoError(t, c.Call(tctx(t), "keys.status", nil, &res))
	require.Equal(t, keychain.SourceKeychain, keyStatusOf(t, res, "ktest").Source)
	raw, _ := json.Marshal(res)
	require.NotContains(t, string(raw), key1[:10])

	sid := ts.session(t, c, map[string]any{"provider": "ktest"})
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turn := func() {
		_, err := c.StartTurn(tctx(t), sid, "hello")
		require.NoError(t, err)
		require.Equal(t, "hi from fake", textOf(collectTurn(t, c, sid)))
	}
	turn()
	require.Equal(t, "Bearer "+key1, f.lastAuth())
	require.NoError(t, c.Call(tctx(t), "keys.set", map[string]any{"provider": "ktest", "apiKey": key2}, nil))
	turn()
	require.Equal(t, "Bearer "+key2, f.lastAuth())

	require.NoError(t, c.Call(tctx(t), "keys.delete", map[string]any{"provider": "ktest"}, &st))
	require.False(t, st.Configured)
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c, "keys.delete", map[string]any{"provider": "ktest"}).Code)
	// Without a key the next turn fails as configuration, naming no key.
	_, err = c.StartTurn(tctx(t), sid, "no key")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Equal(t, 1, countType(evs, "error"))

}
