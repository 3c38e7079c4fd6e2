//go:build linux

package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestE2ESetsidEscapeeDiesWithSidecar: the user approves a background
// command that starts a process in a session of its own (out of the
// task's process group, which the group kill alone would miss); stdin EOF
// ends the sidecar and that process with it.
func TestE2ESetsidEscapeeDiesWithSidecar(t *testing.T) {
	marker := fmt.Sprintf("7%d.5", time.Now().UnixNano()%1_000_000)
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "setsid sleep " + marker + " & wait", "background": true})),
		map[string]any{"text": "waiting", "stall": true},
	)
	e := setup(t, script, nil)
	_, err := e.c.StartTurn(tctx(t), e.sid, "start a daemon")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	untilType(t, e.c, e.sid, "tool_finished")
	untilType(t, e.c, e.sid, "llm_request") // the turn still runs (stalled model)
	// Wait for the escapee itself (not its shell or bwrap) to run in a
	// session of its own.
	escapee := "sleep\x00" + marker + "\x00"
	deadline := time.Now().Add(10 * time.Second)
	for len(processesWith(t, escapee)) == 0 {
		require.True(t, time.Now().Before(deadline), "the escapee never started")
		time.Sleep(5 * time.Millisecond)
	}

	require.NoError(t, e.p.stdin.Close())
	require.True(t, e.p.waitFor(15*time.Second), "exits on stdin EOF")
	require.NoError(t, e.p.waitErr)
	require.Empty(t, processesWith(t, escapee), "the setsid process outlived the sidecar")
	require.Empty(t, processesWith(t, marker), "no process of the command is left")
}
