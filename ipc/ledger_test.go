package ipc

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
)

// TestToolStartNotCommittedNeverRuns: at most once, failing closed. The
// store cannot commit the call's tool_started (a trigger aborts it, as a
// full or broken disk would): the allowlisted command never runs, the call
// gets a not_recorded result and the turn ends with a storage error.
func TestToolStartNotCommittedNeverRuns(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	b, _ := json.Marshal(map[string]string{"command": "touch " + marker})
	p := scripted.New(scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell", Arguments: string(b)}}}, scripted.Response{Text: "never asked"})
	ts := startServer(t, withProvider(p))
	c := ts.dial(t)
	sid := ts.session(t, c, map[string]any{"allowedCommands": []string{"touch"}})
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	db, err := sql.Open("sqlite", ts.st.Path())
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(context.Background(), `CREATE TRIGGER fail_start BEFORE INSERT ON events WHEN NEW.type = 'tool_started'
		BEGIN SELECT RAISE(ABORT, 'injected commit failure'); END`)
	require.NoError(t, err)

	_, err = c.StartTurn(tctx(t), sid, "touch it")
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	_, statErr := os.Stat(marker)
	require.ErrorIs(t, statErr, os.ErrNotExist, "the command never ran")
	var sawErr, sawFinished bool
	for _, ev := range evs {
		require.NotEqual(t, "tool_started", ev.Type, "its start was never committed, so never sent")
		var d map[string]any
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		switch ev.Type {
		case "tool_finished":
			sawFinished = true
			require.Equal(t, "not_recorded", d["reason"])
		case "error":
			sawErr = true
			require.Equal(t, "storage", d["error_type"])
		case "turn_end":
			require.Equal(t, "error", d["status"])
		}
	}
	require.True(t, sawErr && sawFinished)
	require.Len(t, p.Requests(), 1, "the model is not asked again")
}
