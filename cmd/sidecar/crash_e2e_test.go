package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// The crash loop's schedule: -crash.seed replays a failing run (its seed is
// printed at the start), -crash.rounds makes it longer than CI's default.
var (
	crashSeed   = flag.Uint64("crash.seed", 0, "seed of TestE2ECrashLoop's random schedule (0: a new one, printed)")
	crashRounds = flag.Int("crash.rounds", 4, "kill -9 rounds of TestE2ECrashLoop")
)

// gatedScript writes a script whose gates are files in a new folder, and
// returns the script's path and the folder.
func gatedScript(t *testing.T, responses ...map[string]any) (path, gates string) {
	t.Helper()
	gates = t.TempDir()
	b, err := json.Marshal(map[string]any{"gateDir": gates, "responses": responses})
	require.NoError(t, err)
	path = filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path, gates
}

// waitFile waits until path exists (a gate was reached), with a generous
// deadline.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s never appeared", path)
		time.Sleep(5 * time.Millisecond)
	}
}

// waitWritten waits until path has content: a shell's `echo x >> f`
// creates f before it writes, so a file that exists may still be empty.
func waitWritten(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s never had content", path)
		time.Sleep(5 * time.Millisecond)
	}
}

// kill9 SIGKILLs the sidecar and waits until it is gone and its data-dir
// lock is free: a child it was forking when it died holds a copy of the
// lock until that child execs.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, p.waitFor(20*time.Second))
	dataDir := ""
	for i, a := range p.cmd.Args {
		if a == "--data-dir" && i+1 < len(p.cmd.Args) {
			dataDir = p.cmd.Args[i+1]
		}
	}
	if dataDir == "" {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		l, err := acquireLock(filepath.Join(dataDir, "sidecar.lock"))
		if err == nil {
			l.release()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed sidecar's lock is still held: %v (holders: %s)", err, lockHolders(filepath.Join(dataDir, "sidecar.lock")))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockHolders lists the processes that have path open (Linux), for a
// failure message.
func lockHolders(path string) string {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	var out []string
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == path {
			pid := strings.Split(fd, "/")[2]
			comm, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			out = append(out, pid+" "+strings.ReplaceAll(string(comm), "\x00", " "))
		}
	}
	return strings.Join(out, "; ")
}

// replay subscribes a new connection from seq 0 and reads the whole log.
func replay(t *testing.T, p *proc, sid string) ([]client.Event, client.SubscribeResult) {
	t.Helper()
	c := p.connect(t)
	res, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	var evs []client.Event
	for int64(len(evs)) < res.LastSeq {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	require.NoError(t, c.Close())
	return evs, res
}

// turnEnds counts each turn's turn_end.
func turnEnds(evs []client.Event) map[string]int {
	n := map[string]int{}
	for _, ev := range evs {
		if ev.Type == "turn_end" {
			n[ev.TurnID]++
		}
	}
	return n
}

// sessionState reads session.get's status and running.
func sessionState(t *testing.T, c *client.Client, sid string) (string, bool) {
	t.Helper()
	var g struct {
		Session struct {
			Status  string `json:"status"`
			Running bool   `json:"running"`
		} `json:"session"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &g))
	return g.Session.Status, g.Session.Running
}

// TestE2EKillWhileStreaming: kill -9 while the model streams (held at a
// gate); the restarted sidecar gives the dead turn its one turn_end
// (interrupted, sidecar_restart), and the session takes new turns.
func TestE2EKillWhileStreaming(t *testing.T) {
	script, gates := gatedScript(t, map[string]any{"text": "half of an answer", "chunkSize": 4, "gate": "mid"})
	e := setup(t, script, nil)
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "stream")
	require.NoError(t, err)
	waitFile(t, filepath.Join(gates, "mid.reached"))
	untilType(t, e.c, e.sid, "assistant_delta")
	e.p.kill9(t)

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("a new answer")))
	evs, res := replay(t, p2, e.sid)
	require.False(t, res.Running)
	last := evs[len(evs)-1]
	require.Equal(t, "turn_end", last.Type)
	require.Equal(t, turnID, last.TurnID)
	require.Equal(t, "interrupted", dataOf(t, last)["status"])
	require.Equal(t, "sidecar_restart", dataOf(t, last)["reason"])
	require.NotEmpty(t, dataOf(t, last)["message"], "the restart's turn_end says why, like every turn_end with a reason")
	require.Equal(t, map[string]int{turnID: 1}, turnEnds(evs))
	require.NotEmpty(t, ofType(evs, "assistant_delta"), "the streamed deltas were stored before they were sent")

	c := p2.connect(t)
	status, running := sessionState(t, c, e.sid)
	require.Equal(t, "interrupted", status)
	require.False(t, running)
	_, err = c.Subscribe(tctx(t), e.sid, res.LastSeq)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), e.sid, "again")
	require.NoError(t, err)
	rest := untilType(t, c, e.sid, "turn_end")
	require.Equal(t, "a new answer", deltaText(t, rest))
	require.Equal(t, "completed", dataOf(t, rest[len(rest)-1])["status"])
}

// TestE2EKillInSlowTool: kill -9 while a slow approved tool runs (held by
// the shell, not the model); after restart the call is not run again and
// the dead turn has its one turn_end.
func TestE2EKillInSlowTool(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	script := writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo x >> " + started + "; sleep 60"})))
	e := setup(t, script, nil)
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "slow")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, dataOf(t, evs[len(evs)-1])["requestId"].(string), map[string]string{"outcome": "once"}))
	untilType(t, e.c, e.sid, "tool_started")
	waitWritten(t, started)
	e.p.kill9(t)

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("unused")))
	var res client.SubscribeResult
	evs, res = replay(t, p2, e.sid)
	require.False(t, res.Running)
	require.Empty(t, res.PendingRequests)
	require.Equal(t, map[string]int{turnID: 1}, turnEnds(evs))
	require.Equal(t, "sidecar_restart", dataOf(t, evs[len(evs)-1])["reason"])
	b, err := os.ReadFile(started)
	require.NoError(t, err)
	require.Equal(t, "x\n", string(b))
}

// TestE2ECrashLoop kills the real binary at random moments of a session's
// life (streaming, asking, running tools, with turns queued, between
// turns), restarts it and checks the promises against what the client saw:
// every event it received is stored unchanged, seqs are gap-free, each turn
// has at most one turn_end and, once the sidecar recovered, every turn is
// ended, suspended with answerable requests, or one that was acknowledged
// queued and runs now; in the end every acknowledged turn has exactly one
// turn_end and no approved command ran twice. The seed is printed;
// -crash.seed replays the schedule.
func TestE2ECrashLoop(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash loop: seed %d, %d rounds (replay: go test ./cmd/sidecar -run TestE2ECrashLoop -crash.seed=%d -crash.rounds=%d)",
		seed, *crashRounds, seed, *crashRounds)
	rng := rand.New(rand.NewPCG(seed, 15))
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	var sid string
	seen := map[int64]client.Event{} // every event a client received, by seq
	acked := map[string]bool{}       // every turn id turn.start acknowledged
	ackRound := map[string]string{}
	calls := 0
	script := func(round int) string {
		var rs []map[string]any
		for range 2 + rng.IntN(3) { // enough for the queued turns too
			for k := range 1 + rng.IntN(2) {
				calls++
				mark := fmt.Sprintf("r%d-%d-%d", round, k, calls)
				cmd := "echo " + mark + " >> " + ran
				if rng.IntN(3) == 0 {
					cmd += "; sleep 0.2"
				}
				rs = append(rs, map[string]any{"text": "step " + mark, "chunkSize": 1 + rng.IntN(4), "delay": rng.IntN(3),
					"toolCalls": []any{toolCall("", "run_shell", map[string]any{"command": cmd})}})
			}
			rs = append(rs, map[string]any{"text": "turn done", "chunkSize": 2, "delay": rng.IntN(3)})
		}
		return writeScript(t, rs...)
	}
	startTurn := func(c *client.Client, text string) bool {
		id, err := c.StartTurn(tctx(t), sid, text)
		if err != nil {
			return false
		}
		acked[id] = true
		ackRound[id] = text
		return true
	}
	for round := range *crashRounds + 1 {
		final := round == *crashRounds
		p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+script(round))
		c := p.connect(t)
		if sid == "" {
			pid, err := c.OpenProject(tctx(t), projDir)
			require.NoError(t, err)
			sid, err = c.CreateSession(tctx(t), pid, nil)
			require.NoError(t, err)
		}
		// Recovery has run: check the log against what clients saw.
		evs, res := replay(t, p, sid)
		checkCrashLog(t, seed, round, evs, res, seen, acked)

		sub, err := c.Subscribe(tctx(t), sid, res.LastSeq)
		require.NoError(t, err)
		answered := map[string]bool{}
		for _, r := range sub.PendingRequests { // answering resumes the suspended turn
			answered[r.RequestID] = true
			require.NoError(t, c.Respond(tctx(t), sid, r.RequestID, map[string]string{"outcome": "once"}), "seed %d", seed)
		}
		require.True(t, startTurn(c, fmt.Sprintf("round %d", round)), "seed %d", seed)
		killAfter := 1 + rng.IntN(80)
		ends := turnEnds(evs)
		must := map[string]bool{} // turns that must end: acknowledged or started
		for id := range acked {
			must[id] = true
		}
		for _, ev := range evs {
			if ev.Type == "turn_start" {
				must[ev.TurnID] = true
			}
		}
		n := 0
		for {
			if final && allEnded(must, ends) {
				break
			}
			ev, err := c.NextEvent(tctx(t), sid)
			if err != nil {
				all, _ := replay(t, p, sid)
				var missing []string
				for id := range must {
					if ends[id] == 0 {
						k := 0
						for _, e := range all {
							if e.TurnID == id {
								k++
							}
						}
						missing = append(missing, fmt.Sprintf("%s (acked %q, %d events)", id, ackRound[id], k))
					}
				}
				var tail []string
				for _, e := range all[max(0, len(all)-15):] {
					tail = append(tail, fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.TurnID))
				}
				t.Fatalf("seed %d round %d: %v; turns without turn_end: %v; log tail:\n%s", seed, round, err, missing, strings.Join(tail, "\n"))
			}
			seen[ev.Seq] = ev
			n++
			switch ev.Type {
			case "permission_required":
				rid := dataOf(t, ev)["requestId"].(string)
				if answered[rid] {
					break // listed by subscribe too: answered there
				}
				answered[rid] = true
				if !final && rng.IntN(4) == 0 {
					killAfter = n // die while it waits for the answer
					break
				}
				require.NoError(t, c.Respond(tctx(t), sid, rid, map[string]string{"outcome": "once"}))
			case "turn_start":
				must[ev.TurnID] = true
				if rng.IntN(3) == 0 && startTurn(c, fmt.Sprintf("queued r%d", round)) { // one more, queued behind it
					for id := range acked {
						must[id] = true
					}
				}
			case "turn_end":
				ends[ev.TurnID]++
				if !final {
					if rng.IntN(2) == 0 {
						killAfter = n // kill between turns
					} else if startTurn(c, fmt.Sprintf("more r%d", round)) { // keep it busy until the kill
						for id := range acked {
							must[id] = true
						}
					}
				}
			}
			if n == killAfter && !final {
				break
			}
		}
		if final {
			evs, _ := replay(t, p, sid)
			ends := turnEnds(evs)
			for id := range acked {
				require.Equal(t, 1, ends[id], "seed %d: acknowledged turn %s has %d turn_ends", seed, id, ends[id])
			}
			for id, n := range ends {
				require.Equal(t, 1, n, "seed %d: turn %s has %d turn_ends", seed, id, n)
			}
			break
		}
		p.kill9(t)
	}
	b, _ := os.ReadFile(ran)
	lines := strings.Fields(string(b))
	once := map[string]bool{}
	for _, l := range lines {
		require.False(t, once[l], "seed %d: command %s ran twice", seed, l)
		once[l] = true
	}
	t.Logf("crash loop seed %d: %d events seen, %d turns acknowledged, %d commands ran", seed, len(seen), len(acked), len(lines))
}

// allEnded reports whether every acknowledged turn has its turn_end.
func allEnded(acked map[string]bool, ends map[string]int) bool {
	for id := range acked {
		if ends[id] == 0 {
			return false
		}
	}
	return true
}

// checkCrashLog checks a recovered session's whole log.
func checkCrashLog(t *testing.T, seed uint64, round int, evs []client.Event, res client.SubscribeResult, seen map[int64]client.Event, acked map[string]bool) {
	t.Helper()
	for i, ev := range evs {
		require.Equal(t, int64(i+1), ev.Seq, "seed %d round %d: seqs gap-free", seed, round)
	}
	for seq, want := range seen {
		require.LessOrEqual(t, seq, int64(len(evs)), "seed %d round %d: seen seq %d lost", seed, round, seq)
		got := evs[seq-1]
		require.Equal(t, want.Type, got.Type, "seed %d round %d seq %d", seed, round, seq)
		require.Equal(t, want.TurnID, got.TurnID, "seed %d round %d seq %d", seed, round, seq)
		require.True(t, bytes.Equal(want.Data, got.Data) || jsonEq(want.Data, got.Data), "seed %d round %d seq %d data", seed, round, seq)
	}
	ends := turnEnds(evs)
	pending := map[string]bool{}
	for _, r := range res.PendingRequests {
		pending[r.TurnID] = true
	}
	last := map[string]string{} // turn → its last lifecycle event
	startedBefore := map[string]bool{}
	for _, ev := range evs {
		switch ev.Type {
		case "turn_start", "turn_end", "turn_suspended":
			last[ev.TurnID] = ev.Type
		}
		if ev.Type == "turn_start" && seenSeq(seen, ev.Seq) {
			startedBefore[ev.TurnID] = true
		}
	}
	live := 0
	for id, typ := range last {
		require.LessOrEqual(t, ends[id], 1, "seed %d round %d: turn %s has %d turn_ends", seed, round, id, ends[id])
		switch typ {
		case "turn_end":
		case "turn_suspended":
			// Its requests are answerable, or were answered and the answer
			// queued its resume (behind other queued turns when it died).
			if !pending[id] {
				live++
			}
		default:
			// Only a turn acknowledged queued and started by this process
			// may be running: the dead process's turn was settled.
			require.True(t, acked[id] && !startedBefore[id], "seed %d round %d: turn %s neither ended nor suspended after restart", seed, round, id)
			live++
		}
	}
	if !res.Running {
		require.Zero(t, live, "seed %d round %d: a turn waits to run but nothing runs", seed, round)
	}
}

// seenSeq reports whether a client received the event at seq.
func seenSeq(seen map[int64]client.Event, seq int64) bool {
	_, ok := seen[seq]
	return ok
}

func jsonEq(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestE2EQueuedTurnSurvivesExit: a turn that turn.start acknowledged as
// queued survives kill -9 and shutdown, and runs after the restart; the
// turn that was running gets its one turn_end.
func TestE2EQueuedTurnSurvivesExit(t *testing.T) {
	for _, exit := range []string{"kill -9", "shutdown"} {
		t.Run(exit, func(t *testing.T) {
			script, gates := gatedScript(t, map[string]any{"text": "first", "gate": "hold"})
			e := setup(t, script, nil)
			first, err := e.c.StartTurn(tctx(t), e.sid, "first")
			require.NoError(t, err)
			waitFile(t, filepath.Join(gates, "hold.reached"))
			var res struct {
				TurnID string `json:"turnId"`
				Queued int    `json:"queued"`
			}
			require.NoError(t, e.c.Call(tctx(t), "turn.start", map[string]any{"sessionId": e.sid, "text": "second"}, &res))
			require.Equal(t, 1, res.Queued)
			status, running := sessionState(t, e.c, e.sid)
			require.True(t, running)
			require.Equal(t, "running", status)
			if exit == "kill -9" {
				e.p.kill9(t)
			} else {
				require.NoError(t, e.c.Call(tctx(t), "shutdown", map[string]any{}, nil))
				require.True(t, e.p.waitFor(20*time.Second))
			}

			p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("second answered")))
			c := p2.connect(t)
			_, err = c.Subscribe(tctx(t), e.sid, 0)
			require.NoError(t, err)
			var evs []client.Event
			for {
				ev, err := c.NextEvent(tctx(t), e.sid)
				require.NoError(t, err)
				evs = append(evs, ev)
				if ev.Type == "turn_end" && ev.TurnID == res.TurnID {
					break
				}
			}
			require.Equal(t, map[string]int{first: 1, res.TurnID: 1}, turnEnds(evs))
			var second []client.Event
			for _, ev := range evs {
				if ev.TurnID == res.TurnID {
					second = append(second, ev)
				}
			}
			require.Equal(t, "turn_start", second[0].Type)
			require.Equal(t, "second", dataOf(t, second[0])["input"])
			require.Equal(t, "second answered", deltaText(t, second))
			require.Equal(t, "completed", dataOf(t, second[len(second)-1])["status"])
		})
	}
}

// TestE2EKillDuringSnapshot: kill -9 while the end-of-turn snapshot's git
// runs (a git wrapper first in PATH holds the first git call after the
// test arms it). After the restart the turn has its one turn_end, the
// shadow repository still answers vcs.turns, and the next turn is
// snapshotted.
func TestE2EKillDuringSnapshot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the git wrapper is a shell script")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	gate, bin := t.TempDir(), t.TempDir()
	wrapper := "#!/bin/sh\n" +
		"if [ -e '" + gate + "/arm' ] && mkdir '" + gate + "/held' 2>/dev/null; then\n" +
		"  echo \"$@\" > '" + gate + "/held/args'\n" +
		"  echo $$ > '" + gate + "/held/pid'\n" +
		"  while [ ! -e '" + gate + "/release' ]; do sleep 0.05; done\n" +
		"fi\n" +
		"exec '" + realGit + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755))
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")

	dataDir, projDir := filepath.Join(t.TempDir(), "data"), t.TempDir()
	write := func(name string) map[string]any {
		return calls("", toolCall("w-"+name, "write_file", map[string]any{"path": name, "content": "hello " + name + "\n"}))
	}
	p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+writeScript(t, write("a.txt"), text("wrote a")), path)
	c := p.connect(t)
	var pr struct {
		ProjectID string `json:"projectId"`
	}
	require.NoError(t, c.Call(tctx(t), "project.open", map[string]string{"path": projDir, "vcs": "shadow"}, &pr))
	sid, err := c.CreateSession(tctx(t), pr.ProjectID, map[string]any{"mode": "auto"})
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turnID, err := c.StartTurn(tctx(t), sid, "write a")
	require.NoError(t, err)
	untilType(t, c, sid, "tool_finished") // the before-turn snapshot is done
	require.NoError(t, os.WriteFile(filepath.Join(gate, "arm"), nil, 0o600))
	waitWritten(t, filepath.Join(gate, "held", "pid"))
	p.kill9(t)
	args, _ := os.ReadFile(filepath.Join(gate, "held", "args"))
	t.Logf("killed while git %s", strings.TrimSpace(string(args)))
	b, err := os.ReadFile(filepath.Join(gate, "held", "pid"))
	require.NoError(t, err)
	var gitPID int
	_, err = fmt.Sscan(string(b), &gitPID)
	require.NoError(t, err)
	if proc, err := os.FindProcess(gitPID); err == nil {
		_ = proc.Kill() // the snapshot dies with the sidecar
	}
	require.NoError(t, os.Remove(filepath.Join(gate, "arm")))
	require.NoError(t, os.WriteFile(filepath.Join(gate, "release"), nil, 0o600))

	p2 := spawn(t, dataDir, "ZQAGENT_SCRIPT="+writeScript(t, write("b.txt"), text("wrote b")), path)
	evs, _ := replay(t, p2, sid)
	require.Equal(t, 1, turnEnds(evs)[turnID], "one turn_end for the turn killed in its snapshot")
	c2 := p2.connect(t)
	turns := func() int {
		var res struct {
			Turns []json.RawMessage `json:"turns"`
		}
		require.NoError(t, c2.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": sid}, &res))
		return len(res.Turns)
	}
	before := turns()
	_, err = c2.Subscribe(tctx(t), sid, int64(len(evs)))
	require.NoError(t, err)
	_, err = c2.StartTurn(tctx(t), sid, "write b")
	require.NoError(t, err)
	rest := untilType(t, c2, sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, rest[len(rest)-1])["status"])
	require.Greater(t, turns(), before, "the next turn is snapshotted (no stale lock)")
	got, err := os.ReadFile(filepath.Join(projDir, "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello b.txt\n", string(got))
}

// TestE2EQueuedBehindSuspendedTurn: a turn queued behind one that waits for
// approval, across kill -9: after the restart the first is suspended and
// the queued one waits for it; the answer resumes the first (same turnId),
// then the queued one runs; one turn_end each, in order.
func TestE2EQueuedBehindSuspendedTurn(t *testing.T) {
	e := setup(t, writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo approved"}))), nil)
	first, err := e.c.StartTurn(tctx(t), e.sid, "ask")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	second, err := e.c.StartTurn(tctx(t), e.sid, "behind")
	require.NoError(t, err)
	e.p.kill9(t)

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("first resumed"), text("second ran")))
	c := p2.connect(t)
	status, running := sessionState(t, c, e.sid)
	require.Equal(t, "suspended", status, "the queued turn waits for the suspended one")
	require.False(t, running)
	var got struct {
		QueuedTurns int `json:"queuedTurns"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &got))
	require.Equal(t, 1, got.QueuedTurns, "session.get lists the acknowledged turn that waits behind the suspended one")
	sub, err := c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	require.Len(t, sub.PendingRequests, 1)
	untilType(t, c, e.sid, "turn_suspended")
	require.NoError(t, c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once"}))
	var order []string
	text := map[string]string{}
	for len(order) < 2 {
		ev, err := c.NextEvent(tctx(t), e.sid)
		require.NoError(t, err)
		if ev.Type == "assistant_delta" {
			text[ev.TurnID] += dataOf(t, ev)["text"].(string)
		}
		if ev.Type == "turn_end" {
			order = append(order, ev.TurnID)
			require.Equal(t, "completed", dataOf(t, ev)["status"])
		}
	}
	require.Equal(t, []string{first, second}, order)
	require.Equal(t, map[string]string{first: "first resumed", second: "second ran"}, text)
	all, _ := replay(t, p2, e.sid)
	require.Equal(t, map[string]int{first: 1, second: 1}, turnEnds(all))
}
