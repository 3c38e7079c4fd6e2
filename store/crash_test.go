package store

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

// The crash test re-executes the test binary as a writer child (TestMain
// switches on crashChildEnv). The child streams turns into the store with
// group commit and checkpoints, printing "C <seq> <type> <turn>" for every
// event whose commit was reported; the parent SIGKILLs it at random points
// and then checks the database.
const (
	crashChildEnv   = "ZQ_STORE_CRASH_CHILD"
	crashSessionEnv = "ZQ_STORE_CRASH_SESSION"
	crashSeedEnv    = "ZQ_STORE_CRASH_SEED"
)

// runCrashChild is the child's whole life: it writes until it is killed.
func runCrashChild() {
	dir, sid := os.Getenv(crashChildEnv), os.Getenv(crashSessionEnv)
	seed, _ := strconv.Atoi(os.Getenv(crashSeedEnv))
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	history, err := s.Messages(ctx, sid)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child messages:", err)
		os.Exit(3)
	}
	var outMu sync.Mutex // done runs on the writer goroutine; keep lines whole anyway
	report := func(e Event, err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "child append:", err)
			os.Exit(4)
		}
		outMu.Lock()
		fmt.Fprintf(os.Stdout, "C %d %s %s\n", e.Seq, e.Type, e.TurnID) // unbuffered: on the pipe at once
		outMu.Unlock()
	}
	snapshot := func() []llm.Message { return append([]llm.Message(nil), history...) }
	emit := func(turn, typ string, data map[string]any, checkpoint bool) {
		data["taskId"] = turn
		in := EventInput{TurnID: turn, Type: typ, Data: rawJSON(data)}
		if checkpoint {
			in.History = snapshot()
		}
		// The child asks for store primitives by name; what an engine event
		// does to durable state is the session host's rule, and the crash
		// loop of cmd/sidecar drives that through the real binary.
		switch typ {
		case "turn_start":
			in.Status, in.CountTask = "busy", true
		case "turn_end":
			in.Status, in.ClosePending = StatusIdle, true
		case "permission_required":
			in.Pending = &PendingInput{RequestID: data["requestId"].(string), Kind: KindApproval, ToolCallID: "call"}
		}
		s.Enqueue(sid, in, report)
	}
	for n := 0; ; n++ {
		turn := fmt.Sprintf("t%d-%d", seed, n)
		emit(turn, "turn_start", map[string]any{"input": "go"}, false)
		history = append(history, llm.Message{Role: llm.RoleUser, Content: "go " + turn})
		for it := 1; it <= 3; it++ {
			for k := range 20 {
				emit(turn, "assistant_delta", map[string]any{"text": strconv.Itoa(k)}, false)
			}
			emit(turn, "assistant_message", map[string]any{"text": "x"}, false)
			if it == 2 {
				emit(turn, "permission_required", map[string]any{"requestId": turn + "-r", "reqId": "call"}, false)
			}
			history = append(history, llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprintf("%s/%d", turn, it)})
			emit(turn, "iteration_end", map[string]any{"iteration": it}, true)
		}
		history = append(history, llm.Message{Role: llm.RoleAssistant, Content: turn + "/end"})
		emit(turn, "turn_end", map[string]any{"status": "completed", "iterations": 3, "produced_files": []string{}}, true)
		if n%4 == 3 {
			history = history[len(history)-2:] // a compaction: the history shrinks
		}
	}
}

type reported struct {
	typ, turn string
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	ctx := ctxT(t)
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	ss := newSession(t, s)
	require.NoError(t, s.Close())

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	committed := map[int64]reported{}
	midTurn := 0
	const iterations = 30
	for i := range iterations {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashSessionEnv+"="+ss.ID, crashSeedEnv+"="+strconv.Itoa(i))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		record := func(line string) {
			f := strings.Fields(line)
			if len(f) != 4 || f[0] != "C" {
				t.Errorf("child printed %q", line)
				return
			}
			seq, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			committed[seq] = reported{f[2], f[3]}
		}
		// Most runs are killed some time after the first commit; every
		// fifth one at a random moment from its start (possibly in Open).
		if i%5 != 0 {
			if line, ok := <-lines; ok {
				record(line)
			}
		}
		deadline := time.After(time.Duration(rng.IntN(60)) * time.Millisecond)
	wait:
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					break wait
				}
				record(line)
			case <-deadline:
				break wait
			}
		}
		require.NoError(t, cmd.Process.Kill()) // SIGKILL
		for line := range lines {              // what reached the pipe before the kill
			record(line)
		}
		err = cmd.Wait()
		require.True(t, err != nil, "child %d must die by the kill, not exit", i)

		if checkAfterCrash(t, dir, ss.ID, committed) {
			midTurn++
		}
	}
	t.Logf("%d kills, %d events reported committed, %d killed mid-turn", iterations, len(committed), midTurn)
	require.Greater(t, len(committed), iterations, "children committed events")
}

// checkAfterCrash reopens the database after a kill and checks it,
// reporting whether the session had died mid-turn.
func checkAfterCrash(t *testing.T, dir, sid string, committed map[int64]reported) bool {
	t.Helper()
	ctx := ctxT(t)
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err, "reopen after kill")
	defer func() { require.NoError(t, s.Close()) }()
	require.NoError(t, s.IntegrityCheck(ctx))

	evs := allEvents(t, s, sid)
	requireGapFree(t, evs)
	last, err := s.LastSeq(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, int64(len(evs)), last, "last_seq matches the log")
	for seq, r := range committed {
		require.True(t, seq <= last, "reported seq %d lost (last %d)", seq, last)
		e := evs[seq-1]
		require.Equal(t, r, reported{e.Type, e.TurnID}, "event at seq %d", seq)
	}

	// The checkpoint is the one of the last iteration_end/turn_end written
	// by the child (recovery's turn_end carries no history).
	var ckpt *Event
	for i := len(evs) - 1; i >= 0 && ckpt == nil; i-- {
		e := &evs[i]
		var d struct{ Reason string }
		_ = json.Unmarshal(e.Data, &d)
		if (e.Type == "iteration_end" || e.Type == "turn_end") && d.Reason != "sidecar_restart" {
			ckpt = e
		}
	}
	cs, err := s.CheckpointSeq(ctx, sid)
	require.NoError(t, err)
	msgs, err := s.Messages(ctx, sid)
	require.NoError(t, err)
	if ckpt == nil {
		require.Zero(t, cs)
		require.Empty(t, msgs)
	} else {
		require.Equal(t, ckpt.Seq, cs, "checkpoint seq")
		var d struct{ Iteration int }
		require.NoError(t, json.Unmarshal(ckpt.Data, &d))
		want := fmt.Sprintf("%s/%d", ckpt.TurnID, d.Iteration)
		if ckpt.Type == "turn_end" {
			want = ckpt.TurnID + "/end"
		}
		require.NotEmpty(t, msgs)
		require.Equal(t, want, msgs[len(msgs)-1].Content, "history matches event %d", ckpt.Seq)
	}

	// Every approval event has its durable request; it is closed exactly when
	// its turn completed.
	ended := map[string]string{}
	for _, e := range evs {
		if e.Type == "turn_end" {
			var d struct{ Status string }
			require.NoError(t, json.Unmarshal(e.Data, &d))
			ended[e.TurnID] = d.Status
		}
	}
	for _, e := range evs {
		if e.Type != "permission_required" {
			continue
		}
		r, err := s.Request(ctx, e.TurnID+"-r")
		require.NoError(t, err)
		require.Equal(t, e.Seq, r.Seq)
		require.Equal(t, ended[e.TurnID] == "completed", r.Answered, "request of turn %s (%q)", e.TurnID, ended[e.TurnID])
	}

	// The status is the one of the last committed event that set it.
	ss, err := s.Session(ctx, sid)
	require.NoError(t, err)
	want := StatusIdle
	for _, e := range evs {
		switch e.Type {
		case "turn_start":
			want = "busy"
		case "turn_end":
			want = StatusIdle
		}
	}
	require.Equal(t, want, ss.Status)
	return want == "busy"
}
