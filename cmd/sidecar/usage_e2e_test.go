package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// TestE2EUsageTotalsSurviveARestart: through the real binary and a real
// HTTP endpoint that reports the usage split and x-ratelimit-* headers:
// providers.set prices the model, each model response (the turn's and the
// title's) has its usage event with the session's totals and cost, the
// turn's has a rate_limits event, the session object carries the totals,
// after a restart the totals are still there and go on, and new prices
// apply to a loaded session from its next response.
func TestE2EUsageTotalsSurviveARestart(t *testing.T) {
	f := newFakeModel(t, "first answer", "second answer")
	f.usage = `{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":12}}`
	f.headers = map[string]string{"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-requests": "1s",
		"x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}
	envv := modelEnv(f)
	dir := t.TempDir()
	dataDir, projDir := filepath.Join(dir, "data"), filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(projDir, 0o755))
	p := spawn(t, dataDir, envv...)
	c := p.connect(t)

	// The model has no price in the default table; the profile gives one.
	err := c.Call(tctx(t), "providers.set", map[string]any{"name": "openai", "prices": map[string]any{"m-fake": map[string]any{"input": -1, "output": 1}}}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v", err)
	var prov struct {
		Prices map[string]map[string]float64 `json:"prices"`
	}
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "openai",
		"prices": map[string]any{"m-fake": map[string]any{"input": 2, "cachedInput": 1, "output": 4}}}, &prov))
	require.Equal(t, map[string]float64{"input": 2, "cachedInput": 1, "output": 4}, prov.Prices["m-fake"])

	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "turn_end")
	us := ofType(evs, "usage")
	require.Len(t, us, 1)
	one := map[string]any{"input": 100.0, "cachedInput": 40.0, "output": 30.0, "reasoning": 12.0}
	two := map[string]any{"input": 200.0, "cachedInput": 80.0, "output": 60.0, "reasoning": 24.0}
	three := map[string]any{"input": 300.0, "cachedInput": 120.0, "output": 90.0, "reasoning": 36.0}
	const cost = (60*2 + 40*1 + 30*4) / 1e6 // uncached input, cached input, output
	d := dataOf(t, us[0])
	require.Equal(t, "turn", d["source"])
	require.Equal(t, "m-fake", d["model"])
	require.Equal(t, one, d["response"])
	require.Equal(t, one, d["turn"])
	require.Equal(t, one, d["session"])
	require.Equal(t, 130.0, d["context"].(map[string]any)["tokens"])
	require.InDelta(t, cost, d["cost"].(map[string]any)["session"], 1e-12)
	rl := ofType(evs, "rate_limits")
	require.Len(t, rl, 1)
	rd := dataOf(t, rl[0])
	require.Equal(t, d["reqId"], rd["reqId"])
	require.Equal(t, 500.0, rd["requests"].(map[string]any)["limit"])
	require.Equal(t, 0.0, rd["tokens"].(map[string]any)["remaining"])

	// The title's request counts toward the session (no turn).
	evs = untilType(t, c, sid, "session_named")
	us = ofType(evs, "usage")
	require.Len(t, us, 1)
	d = dataOf(t, us[0])
	require.Equal(t, "title", d["source"])
	require.Equal(t, "", d["taskId"])
	require.Equal(t, two, d["session"])
	require.InDelta(t, 2*cost, d["cost"].(map[string]any)["session"], 1e-12)

	sessionUsage := func(c *client.Client) map[string]any {
		var got struct {
			Session struct {
				Usage map[string]any `json:"usage"`
			} `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
		return got.Session.Usage
	}
	u := sessionUsage(c)
	require.Equal(t, two, u["tokens"])
	require.InDelta(t, 2*cost, u["cost"], 1e-12)

	// A restart keeps the totals, and the next turn goes on from them.
	require.NoError(t, c.Call(tctx(t), "shutdown", nil, nil))
	require.True(t, p.waitFor(10*time.Second))
	p2 := spawn(t, dataDir, envv...)
	c2 := p2.connect(t)
	u = sessionUsage(c2)
	require.Equal(t, two, u["tokens"])
	require.InDelta(t, 2*cost, u["cost"], 1e-12)
	var got struct {
		Session struct {
			LastSeq int64 `json:"lastSeq"`
		} `json:"session"`
	}
	require.NoError(t, c2.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	_, err = c2.Subscribe(tctx(t), sid, got.Session.LastSeq)
	require.NoError(t, err)
	_, err = c2.StartTurn(tctx(t), sid, "again")
	require.NoError(t, err)
	evs = untilType(t, c2, sid, "turn_end")
	us = ofType(evs, "usage")
	require.NotEmpty(t, us)
	d = dataOf(t, us[len(us)-1])
	require.Equal(t, one, d["turn"])
	require.Equal(t, three, d["session"])
	require.InDelta(t, 3*cost, d["cost"].(map[string]any)["session"], 1e-12)
	require.Equal(t, three, sessionUsage(c2)["tokens"])

	// New prices apply to the loaded session from its next response on.
	require.NoError(t, c2.Call(tctx(t), "providers.set", map[string]any{"name": "openai",
		"prices": map[string]any{"m-fake": map[string]any{"input": 0, "output": 0}}}, nil))
	_, err = c2.StartTurn(tctx(t), sid, "free now")
	require.NoError(t, err)
	evs = untilType(t, c2, sid, "turn_end")
	us = ofType(evs, "usage")
	require.NotEmpty(t, us)
	d = dataOf(t, us[len(us)-1])
	require.Equal(t, 0.0, d["cost"].(map[string]any)["response"])
	require.InDelta(t, 3*cost, d["cost"].(map[string]any)["session"], 1e-12)
}
