//go:build linux

package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/keychain/keychaintest"
)

// exitBound is the product's promise: the sidecar exits within 2 s of
// stdin EOF in every state. Tests do not assert it (a loaded CI machine
// may take longer); they wait with a generous deadline and log the time.
const exitBound = 2 * time.Second

// eofExit closes the sidecar's stdin and waits for it to exit; it returns
// how long that took.
func eofExit(t *testing.T, p *proc) time.Duration {
	t.Helper()
	start := time.Now()
	require.NoError(t, p.stdin.Close())
	require.True(t, p.waitFor(60*time.Second), "the sidecar did not exit after stdin EOF")
	took := time.Since(start)
	require.NoError(t, p.waitErr)
	if took > exitBound {
		t.Logf("exit took %v after stdin EOF (over the product bound of %v; a loaded machine?)", took, exitBound)
	} else {
		t.Logf("exit took %v after stdin EOF", took)
	}
	return took
}

// restartable starts a sidecar on dataDir again: the lock was released.
func restartable(t *testing.T, dataDir string, env ...string) {
	t.Helper()
	p := spawn(t, dataDir, env...)
	require.NotZero(t, p.ready.PID)
	eofExit(t, p)
}

// TestE2EHungKeychain: on a machine whose Secret Service takes calls and
// never answers (a fake on a private session bus), with no other key, ten
// first turns at once each end with an error event (error_type config,
// naming the silent keychain and the remedy) and then their turn_end; the
// model is never asked; keys.set answers -32005; keys.status answers; on
// stdin EOF the sidecar exits and releases its lock.
func TestE2EHungKeychain(t *testing.T) {
	h := keychaintest.StartHung(t)
	f := newFakeModel(t, "never asked")
	env := append(f.env(), "DBUS_SESSION_BUS_ADDRESS="+h.Address, "OPENAI_API_KEY=")
	dir := t.TempDir()
	dataDir, projDir := filepath.Join(dir, "data"), filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, env...)
	c := p.connect(t)
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)

	const n = 10
	sids := make([]string, n)
	conns := make([]*client.Client, n)
	for i := range sids {
		conns[i] = p.connect(t)
		sids[i], err = conns[i].CreateSession(tctx(t), pid, nil)
		require.NoError(t, err)
		_, err = conns[i].Subscribe(tctx(t), sids[i], 0)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	ends := make([][]client.Event, n)
	for i := range sids {
		wg.Go(func() {
			if _, err := conns[i].StartTurn(tctx(t), sids[i], "hello"); err != nil {
				t.Errorf("turn.start %d: %v", i, err)
				return
			}
			ends[i] = untilTypeErr(t, conns[i], sids[i], "turn_end")
		})
	}
	wg.Wait()
	for i, evs := range ends {
		require.NotEmpty(t, evs, "turn %d", i)
		errs := ofType(evs, "error")
		require.Len(t, errs, 1, "turn %d", i)
		d := dataOf(t, errs[0])
		require.Equal(t, "config", d["error_type"], "turn %d", i)
		require.Contains(t, d["error"], "did not answer", "turn %d", i)
		require.Contains(t, d["error"], "OPENAI_API_KEY", "turn %d: the remedy", i)
		require.Equal(t, "error", dataOf(t, evs[len(evs)-1])["status"], "turn %d", i)
	}
	streams, _ := f.counts()
	require.Zero(t, streams, "no key: the model was never asked")

	err = c.Call(tctx(t), "keys.set", map[string]any{"provider": "openai", "apiKey": "sk-hung-0123456789"}, nil)
	require.Equal(t, client.CodeConfig, client.Code(err), "%v", err)
	require.Contains(t, err.Error(), "did not answer")
	st := keyStatusOf(t, c, "openai")
	require.False(t, st.Configured)
	require.Contains(t, st.Error, "did not answer")

	eofExit(t, p)
	restartable(t, dataDir, env...)
}

// TestE2EHungKeychainEnvKeyServes: the same silent keychain with
// OPENAI_API_KEY set: the keychain is asked once, and after its timeout
// the environment's key serves every turn.
func TestE2EHungKeychainEnvKeyServes(t *testing.T) {
	h := keychaintest.StartHung(t)
	f := newFakeModel(t, "served by the env key")
	env := append(f.env(), "DBUS_SESSION_BUS_ADDRESS="+h.Address, "OPENAI_API_KEY=sk-env-hung-0123")
	e := setupEnv(t, env, nil)
	for range 3 {
		_, err := e.c.StartTurn(tctx(t), e.sid, "hello")
		require.NoError(t, err)
		evs := untilType(t, e.c, e.sid, "turn_end")
		require.Equal(t, "served by the env key", deltaText(t, evs))
		require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	}
	require.LessOrEqual(t, h.Calls(), int64(2), "the keychain is asked once per change, not per request")
	eofExit(t, e.p)
	restartable(t, e.dataDir, env...)
}

// TestE2EExitOnStdinEOFInEveryState: the sidecar exits soon after stdin
// EOF whatever it is doing, and the next start on its data dir succeeds.
func TestE2EExitOnStdinEOFInEveryState(t *testing.T) {
	nothing := func(*testing.T, *env) {}
	// Each case returns the sidecar's environment (added to os.Environ) and
	// what drives its session into the state.
	cases := []struct {
		name  string
		extra map[string]any // session.create
		start func(t *testing.T) (env []string, reach func(*testing.T, *env))
	}{
		{name: "idle", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			return scriptEnv(t, text("hi")), nothing
		}},
		{name: "streaming from a stalled model", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			return scriptEnv(t, map[string]any{"text": "thinking", "stall": true}), func(t *testing.T, e *env) {
				startTurn(t, e, "think")
				untilType(t, e.c, e.sid, "assistant_delta")
			}
		}},
		{name: "awaiting approval", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			return scriptEnv(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo hi"})), text("done")), func(t *testing.T, e *env) {
				startTurn(t, e, "run it")
				untilType(t, e.c, e.sid, "permission_required")
			}
		}},
		{name: "a tool running", extra: map[string]any{"mode": "auto"}, start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			return scriptEnv(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "sleep 300"})), text("done")), func(t *testing.T, e *env) {
				startTurn(t, e, "sleep")
				untilType(t, e.c, e.sid, "tool_started")
			}
		}},
		{name: "a terminal open", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			return scriptEnv(t, text("hi")), func(t *testing.T, e *env) {
				pid, err := e.c.OpenProject(tctx(t), e.projDir)
				require.NoError(t, err)
				var ti termInfo
				require.NoError(t, e.c.Call(tctx(t), "terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "shell": "/bin/sh"}, &ti))
				require.NotZero(t, ti.Pid)
			}
		}},
		{name: "a turn on a stalled real model", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			f := newFakeModel(t, "stall")
			return append(f.env(), "OPENAI_API_KEY=sk-stall-0123", noBus), func(t *testing.T, e *env) {
				startTurn(t, e, "hello")
				untilType(t, e.c, e.sid, "llm_request")
			}
		}},
		{name: "a naming request in flight", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			f := newFakeModel(t, "named soon")
			f.hangNaming = true
			return append(f.env(), "OPENAI_API_KEY=sk-naming-0123", noBus), func(t *testing.T, e *env) {
				startTurn(t, e, "hello")
				untilType(t, e.c, e.sid, "turn_end")
				select {
				case <-f.namingAt:
				case <-tctx(t).Done():
					t.Fatal("no naming request")
				}
			}
		}},
		{name: "a hung keychain", start: func(t *testing.T) ([]string, func(*testing.T, *env)) {
			h := keychaintest.StartHung(t)
			return append(newFakeModel(t, "never").env(), "OPENAI_API_KEY=", "DBUS_SESSION_BUS_ADDRESS="+h.Address), func(t *testing.T, e *env) {
				startTurn(t, e, "hello")
				untilType(t, e.c, e.sid, "turn_start")
			}
		}},
	}
	times := make([]time.Duration, len(cases))
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, reach := tc.start(t)
			e := setupEnv(t, env, tc.extra)
			reach(t, e)
			times[i] = eofExit(t, e.p)
			restartable(t, e.dataDir, env...)
		})
	}
	for i, tc := range cases {
		t.Logf("%-32s exit after stdin EOF: %v", tc.name, times[i].Round(time.Millisecond))
	}
}

// scriptEnv is the environment of a sidecar answering with a script.
func scriptEnv(t *testing.T, responses ...map[string]any) []string {
	return []string{"ZQAGENT_SCRIPT=" + writeScript(t, responses...)}
}

// untilTypeErr is untilType for a goroutine other than the test's: it
// reports with t.Errorf and returns what it read.
func untilTypeErr(t *testing.T, c *client.Client, sid, typ string) []client.Event {
	var out []client.Event
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		if err != nil {
			t.Errorf("waiting for %s: %v", typ, err)
			return out
		}
		out = append(out, ev)
		if ev.Type == typ {
			return out
		}
	}
}
