package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

var atMostOnceRounds = flag.Int("atmostonce.rounds", 200, "kill -9 rounds of TestE2EApprovedCommandAtMostOnce")

// TestE2EApprovedCommandAtMostOnce (issue 25): an approved command runs at
// most once across kill -9, whatever the moment of the kill. Each round a
// sidecar asks for approval of `echo r<N> >> ran`, the user answers once,
// the sidecar is killed at one of the turn's moments (right after the
// answer, at tool_started, once the command wrote, at tool_finished, at
// turn_end), and a new sidecar on the same data dir recovers and resumes
// what is left. The line r<N> is never written twice (a command killed
// between its tool_started and its run is not run again: the model gets
// "may have run").
func TestE2EApprovedCommandAtMostOnce(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 25))
	t.Logf("at most once: seed %d, %d rounds", seed, *atMostOnceRounds)
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	after := func() string { return writeScript(t, text("checked"), text("checked"), text("checked")) }
	moments := []string{"answered", "tool_started", "wrote", "tool_finished", "turn_end"}
	for round := range *atMostOnceRounds {
		mark := fmt.Sprintf("r%d", round)
		script := writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo " + mark + " >> " + ran})), text("done"))
		p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+script)
		c := p.connect(t)
		pid, err := c.OpenProject(tctx(t), projDir)
		require.NoError(t, err)
		sid, err := c.CreateSession(tctx(t), pid, nil)
		require.NoError(t, err)
		_, err = c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		_, err = c.StartTurn(tctx(t), sid, "run it")
		require.NoError(t, err)
		evs := untilType(t, c, sid, "permission_required")
		rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
		require.NoError(t, c.Respond(tctx(t), sid, rid, map[string]string{"outcome": "once"}))
		moment := moments[rng.IntN(len(moments))]
		switch moment {
		case "answered":
		case "wrote":
			require.Eventually(t, func() bool { return strings.Contains(readFile(ran), mark+"\n") }, 60*time.Second, time.Millisecond)
		default:
			untilType(t, c, sid, moment)
		}
		p.kill9(t)

		p2 := spawn(t, dataDir, "ZQAGENT_SCRIPT="+after())
		c2 := p2.connect(t)
		_, err = c2.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		var res struct {
			TurnID string `json:"turnId"`
		}
		if err := c2.Call(tctx(t), "turn.resume", map[string]string{"sessionId": sid}, &res); err != nil {
			require.Equal(t, client.CodeConflict, client.Code(err), "round %d (%s): %v", round, moment, err)
		} else {
			// The resumed turn runs what is left; a call whose answer came
			// before the kill but that never started may be asked again.
			for {
				ev, err := c2.NextEvent(tctx(t), sid)
				require.NoError(t, err, "round %d (%s)", round, moment)
				if ev.TurnID != res.TurnID {
					continue
				}
				if ev.Type == "permission_required" {
					require.NoError(t, c2.Respond(tctx(t), sid, dataOf(t, ev)["requestId"].(string), map[string]string{"outcome": "once"}))
				}
				if ev.Type == "turn_end" {
					break
				}
			}
		}
		require.Eventually(t, func() bool {
			var g struct {
				Session struct {
					Running bool `json:"running"`
				} `json:"session"`
			}
			require.NoError(t, c2.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &g))
			return !g.Session.Running
		}, 60*time.Second, 5*time.Millisecond, "round %d (%s): the session never came to rest", round, moment)
		n := strings.Count(readFile(ran), mark+"\n")
		require.LessOrEqual(t, n, 1, "seed %d round %d (killed at %s): the approved command ran %d times", seed, round, moment, n)
		if moment == "wrote" || moment == "tool_finished" || moment == "turn_end" {
			require.Equal(t, 1, n, "seed %d round %d (killed at %s): it had run", seed, round, moment)
		}
		require.NoError(t, p2.stdin.Close())
		require.True(t, p2.waitFor(20*time.Second))
	}
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
