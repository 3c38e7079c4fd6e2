package main

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol/validate"
)

// TestAdditiveFramesPassAClient: additive changes never break a client
// (ui-protocol.md §3, "What may change within version 1"). Every frame this
// build sends in a session (initialize, project, session, a turn with an
// approval, session.get with the pending request, an error) is changed the
// way a newer sidecar of version 1 may change it — a member the schema does
// not list in every object of its result, params or error, an event type
// and a request kind the schema does not list — and passes the schema read
// as a client reads it (validate.NewClient), while the exact reading the
// end-to-end tests hold this build to rejects each change.
func TestAdditiveFramesPassAClient(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo additive"})),
		text("done"),
	)
	p := spawn(t, t.TempDir(), "ZQAGENT_SCRIPT="+script)
	exact, err := validate.New()
	require.NoError(t, err)
	asClient, err := validate.NewClient()
	require.NoError(t, err)

	type frame struct {
		method string
		data   []byte
	}
	var mu sync.Mutex
	var frames []frame
	c, err := client.Dial(tctx(t), p.ready.URL, p.ready.Token, &client.Options{Check: func(method string, data []byte) error {
		mu.Lock()
		frames = append(frames, frame{method, slices.Clone(data)})
		mu.Unlock()
		return exact.Frame(method, data)
	}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Initialize(tctx(t), "additive", "1", false)
	require.NoError(t, err)
	pid, err := c.OpenProject(tctx(t), t.TempDir())
	require.NoError(t, err)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "run it")
	require.NoError(t, err)
	evs := untilType(t, c, sid, "permission_required")
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, nil))
	require.NoError(t, c.Respond(tctx(t), sid, dataOf(t, evs[len(evs)-1])["requestId"].(string), map[string]string{"outcome": "once"}))
	untilType(t, c, sid, "turn_end")
	require.Equal(t, client.CodeNotFound, client.Code(c.Call(tctx(t), "session.get", map[string]string{"sessionId": "nope"}, nil)))
	require.Empty(t, c.Violations(), "this build's frames match the schema exactly")

	mu.Lock()
	defer mu.Unlock()
	var events, pending int
	check := func(what string, f frame, change func(m map[string]any) bool) {
		t.Helper()
		var m map[string]any
		require.NoError(t, json.Unmarshal(f.data, &m))
		if !change(m) {
			return
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, asClient.Frame(f.method, b), "%s: a client takes %s", what, b)
		require.Error(t, exact.Frame(f.method, b), "%s: the exact reading sees the change in %s", what, b)
	}
	for _, f := range frames {
		check("a new member in every object", f, func(m map[string]any) bool {
			for _, k := range []string{"result", "params", "error"} {
				if v, ok := m[k]; ok {
					m[k] = withFuture(v)
				}
			}
			return true
		})
		check("a new event type", f, func(m map[string]any) bool {
			params, _ := m["params"].(map[string]any)
			if m["method"] != "session.event" {
				return false
			}
			params["type"] = "future_event"
			events++
			return true
		})
		check("a new request kind", f, func(m map[string]any) bool {
			r, _ := m["result"].(map[string]any)
			reqs, _ := r["pendingRequests"].([]any)
			for _, req := range reqs {
				req.(map[string]any)["kind"] = "future_kind"
			}
			pending += len(reqs)
			return len(reqs) > 0
		})
	}
	require.Greater(t, len(frames), 10)
	require.Greater(t, events, 5, "session.events were changed")
	require.Equal(t, 1, pending, "session.get's pending request was changed")
}

// withFuture adds "zqFuture": "x" to every object in v (a string: the maps
// the sidecar sends hold strings).
func withFuture(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = withFuture(x)
		}
		v["zqFuture"] = "x"
	case []any:
		for i, x := range v {
			v[i] = withFuture(x)
		}
	}
	return v
}
