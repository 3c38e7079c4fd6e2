package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// modelEnv is the environment of a sidecar whose default profile talks to
// f with a key, and no keychain.
func modelEnv(f *fakeModel, more ...string) []string {
	return append(append(f.env(), "OPENAI_API_KEY=sk-retry-e2e-0123", noBus), more...)
}

// TestE2ERetriesThenSuccess: a model endpoint that answers 429, then 500,
// then resets the connection, then streams: the production provider reads
// its retry settings from the environment, announces each retry with an
// llm_retry event and the turn completes with the text.
func TestE2ERetriesThenSuccess(t *testing.T) {
	f := newFakeModel(t, "429", "500", "reset", "after retries")
	e := setupEnv(t, modelEnv(f, "OPENAI_MAX_RETRIES=2", "NETWORK_RETRY_MAX=1", "NETWORK_RETRY_BASE_MS=1"), nil)
	startTurn(t, e, "hello")
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	require.Equal(t, "after retries", deltaText(t, evs))
	require.Empty(t, ofType(evs, "error"))
	retries := ofType(evs, "llm_retry")
	require.Len(t, retries, 3)
	for i, want := range []struct {
		attempt, max float64
		reason       string
	}{{1, 2, "HTTP 429"}, {2, 2, "HTTP 500"}, {1, 1, ""}} {
		d := dataOf(t, retries[i])
		require.Equal(t, want.attempt, d["attempt"], "retry %d", i)
		require.Equal(t, want.max, d["max"], "retry %d", i)
		require.Contains(t, d["reason"], want.reason, "retry %d", i)
		require.NotContains(t, d["reason"], "sk-retry", "retry %d: no key in the reason", i)
	}
	streams, _ := f.counts()
	require.Equal(t, 4, streams)
}

// TestE2EIdleWatchdog: a stream that sends its headers and then nothing is
// ended by the idle watchdog (OPENAI_STREAM_IDLE_MS): an error event
// (error_type network, retriable) and turn_end {status: error}, not a hang.
func TestE2EIdleWatchdog(t *testing.T) {
	f := newFakeModel(t, "stall")
	e := setupEnv(t, modelEnv(f, "OPENAI_STREAM_IDLE_MS=300", "NETWORK_RETRY_MAX=0"), nil)
	startTurn(t, e, "hello")
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "error", dataOf(t, evs[len(evs)-1])["status"])
	errs := ofType(evs, "error")
	require.Len(t, errs, 1)
	d := dataOf(t, errs[0])
	require.Equal(t, "network", d["error_type"])
	require.Equal(t, true, d["retriable"])
	require.Contains(t, d["error"], "produced nothing for too long")
}

// TestE2EProfileRetryOverride: with OPENAI_MAX_RETRIES=0 a 500 ends a
// turn of a profile without overrides; a profile whose retry sets
// maxRetries retries it (with an llm_retry event) and completes; the
// overrides show in providers.list; a bad one is refused naming the member.
func TestE2EProfileRetryOverride(t *testing.T) {
	strict, patient := newFakeModel(t, "500", "strict ok"), newFakeModel(t, "500", "patient ok")
	dir := t.TempDir()
	dataDir, projDir := filepath.Join(dir, "data"), filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, "OPENAI_MAX_RETRIES=0", "NETWORK_RETRY_BASE_MS=1", "ZQAGENT_SCRIPT=", noBus,
		"STRICT_API_KEY=sk-strict-0123", "PATIENT_API_KEY=sk-patient-0123")
	c := p.connect(t)
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)

	profile := func(name string, f *fakeModel, retry map[string]any) map[string]any {
		params := map[string]any{"name": name, "baseUrl": f.srv.URL + "/v1", "apiMode": "chat", "defaultModel": "m-fake"}
		if retry != nil {
			params["retry"] = retry
		}
		var info map[string]any
		require.NoError(t, c.Call(tctx(t), "providers.set", params, &info))
		return info
	}
	require.Equal(t, map[string]any{}, profile("strict", strict, nil)["retry"])
	info := profile("patient", patient, map[string]any{"maxRetries": 2, "networkRetryBaseMs": 1})
	require.Equal(t, map[string]any{"maxRetries": float64(2), "networkRetryBaseMs": float64(1)}, info["retry"])

	turn := func(provider string) []client.Event {
		sid, err := c.CreateSession(tctx(t), pid, map[string]any{"provider": provider})
		require.NoError(t, err)
		_, err = c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		_, err = c.StartTurn(tctx(t), sid, "hello")
		require.NoError(t, err)
		return untilType(t, c, sid, "turn_end")
	}
	evs := turn("strict")
	require.Equal(t, "error", dataOf(t, evs[len(evs)-1])["status"])
	require.Empty(t, ofType(evs, "llm_retry"))
	require.Equal(t, "server", dataOf(t, ofType(evs, "error")[0])["error_type"])
	evs = turn("patient")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	require.Equal(t, "patient ok", deltaText(t, evs))
	require.Len(t, ofType(evs, "llm_retry"), 1)
	s1, _ := strict.counts()
	s2, _ := patient.counts()
	require.Equal(t, 1, s1, "no retry without the override")
	require.Equal(t, 2, s2)

	for _, bad := range []map[string]any{{"maxRetries": -1}, {"maxRetry": 2}, {"timeoutMs": "5s"}} {
		err := c.Call(tctx(t), "providers.set", map[string]any{"name": "patient", "retry": bad}, nil)
		require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v: %v", bad, err)
		require.Contains(t, err.Error(), "retry")
	}
	// {} clears the overrides.
	require.Equal(t, map[string]any{}, profile("patient", patient, map[string]any{})["retry"])
}
