package ipc

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The error and turn_end the sidecar records itself for a turn whose engine
// could not be built carry the turn's taskId, like the engine's own.
func TestSyntheticErrorCarriesTaskID(t *testing.T) {
	f := newFakeOpenAI(t)
	t.Setenv("GONE_API_KEY", "sk-gone-env-key-0001")
	ts := startServer(t, withModelProviders())
	c := ts.dial(t)
	require.NoError(t, c.Call(tctx(t), "providers.set", map[string]any{"name": "gone", "baseUrl": f.baseURL(), "apiMode": "chat", "defaultModel": "m-small"}, nil))
	sid, err := c.CreateSession(tctx(t), ts.project(t, c), map[string]any{"provider": "gone", "vcs": "off"})
	require.NoError(t, err)
	require.NoError(t, c.Call(tctx(t), "providers.delete", map[string]any{"name": "gone"}, nil))
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turnID, err := c.StartTurn(tctx(t), sid, "hello")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Len(t, evs, 3, "turn_start + error + turn_end")
	for _, ev := range evs {
		var d struct {
			TaskID string `json:"taskId"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		require.Equal(t, turnID, d.TaskID, "%s %s", ev.Type, ev.Data)
		require.Equal(t, turnID, ev.TurnID)
	}
	require.Equal(t, []string{"turn_start", "error", "turn_end"}, []string{evs[0].Type, evs[1].Type, evs[2].Type})
	require.Contains(t, string(evs[1].Data), "gone")
}
