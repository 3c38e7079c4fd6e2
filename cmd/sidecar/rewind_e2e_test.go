//go:build !windows

package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// fakeCall is a fake model step that streams one tool call.
func fakeCall(name string, args any) string {
	b, _ := json.Marshal(args)
	return "call:" + name + ":" + string(b)
}

// rewind calls session.rewind.
func rewind(c *client.Client, t *testing.T, sid, turnID string, files bool, opts ...string) (protocol.SessionRewindResult, error) {
	t.Helper()
	p := map[string]any{"sessionId": sid, "turnId": turnID, "files": files}
	for _, o := range opts {
		p[o] = true // "dryRun", "force"
	}
	var res protocol.SessionRewindResult
	err := c.Call(tctx(t), "session.rewind", p, &res)
	return res, err
}

// wireErr is err as a JSON-RPC error.
func wireErr(t *testing.T, err error) *client.Error {
	t.Helper()
	var we *client.Error
	require.True(t, errors.As(err, &we), "%v", err)
	return we
}

// workspace reads every file under dir but .agent/ (relative path →
// content).
func workspace(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == ".agent" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	}))
	return out
}

// rewindState is what a refused or dry-run rewind must leave alone: the
// workspace, the history, the event log's length and the snapshots.
type rewindState struct {
	Files    map[string]string
	Messages json.RawMessage
	LastSeq  int64
	Turns    json.RawMessage
}

func stateOf(t *testing.T, e *env) rewindState {
	t.Helper()
	var g struct {
		Messages json.RawMessage `json:"messages"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &g))
	var vt struct {
		Turns json.RawMessage `json:"turns"`
	}
	require.NoError(t, e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &vt))
	_, res := replay(t, e.p, e.sid)
	return rewindState{Files: workspace(t, e.projDir), Messages: g.Messages, LastSeq: res.LastSeq, Turns: vt.Turns}
}

// historyTurns are the turnIds and texts of the user messages of
// session.get's history that opened a turn.
func historyTurns(t *testing.T, c *client.Client, sid string) []string {
	t.Helper()
	var g struct {
		Messages []protocol.Message `json:"messages"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &g))
	out := []string{}
	for _, m := range g.Messages {
		if m.Role == "user" && m.Notice == "" {
			out = append(out, m.TurnID+":"+m.Content)
		}
	}
	return out
}

// untilTurnEnd reads events until turnID's turn_end and returns all read.
func untilTurnEnd(t *testing.T, c *client.Client, sid, turnID string) []client.Event {
	t.Helper()
	var out []client.Event
	for {
		ev, err := c.NextEvent(tctx(t), sid)
		require.NoError(t, err)
		out = append(out, ev)
		if ev.Type == "turn_end" && ev.TurnID == turnID {
			return out
		}
	}
}

// TestE2ERewind (issue 31, item 1): three turns change files, through
// write_file and through the shell. session.rewind is refused while a turn
// runs, while one is queued and while an approval is pending, each saying
// which; a dry run reports exactly the files and turns and changes
// nothing; a file the user edited after the last snapshot is refused by
// the clobber guard (named in the message and data.files) until force;
// then the files and the history are back to just before the turn, the
// turn's input is returned, session_rewound is in the log, and the next
// model request (as the model server receives it) has the rewound history.
func TestE2ERewind(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	fm := newFakeModel(t,
		fakeCall("write_file", map[string]any{"path": "a.txt", "content": "one\n"}), "wrote a",
		fakeCall("run_shell", map[string]any{"command": "echo two > b.txt && echo more >> a.txt"}), "ran the shell",
		fakeCall("write_file", map[string]any{"path": "c.txt", "content": "three\n"}), "wrote c",
		"stall", // the held turn
		fakeCall("run_shell", map[string]any{"command": "echo asked"}), // waits for approval
		"after the rewind",
	)
	e := setupEnv(t, modelEnv(fm), map[string]any{"mode": "auto"})
	turn := func(text string) string {
		t.Helper()
		id, err := e.c.StartTurn(tctx(t), e.sid, text)
		require.NoError(t, err)
		evs := untilTurnEnd(t, e.c, e.sid, id)
		require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"], "turn %q", text)
		return id
	}
	t1, t2, t3 := turn("write a"), turn("shell b"), turn("write c")
	require.Equal(t, map[string]string{"a.txt": "one\nmore\n", "b.txt": "two\n", "c.txt": "three\n"}, workspace(t, e.projDir))
	var vt protocol.VCSTurnsResult
	require.NoError(t, e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &vt))
	require.Len(t, vt.Turns, 3)
	for i, id := range []string{t1, t2, t3} {
		require.Equal(t, id, vt.Turns[i].TurnID, "vcs.turns says which turn each snapshot is")
	}
	require.Equal(t, []string{t1 + ":write a", t2 + ":shell b", t3 + ":write c"}, historyTurns(t, e.c, e.sid))

	busy := func(wants ...string) {
		t.Helper()
		_, err := rewind(e.c, t, e.sid, t2, true)
		we := wireErr(t, err)
		require.Equal(t, client.CodeConflict, we.Code, we.Message)
		require.Equal(t, protocol.KindBusy, we.Data.Kind)
		for _, w := range wants {
			require.Contains(t, we.Message, w)
		}
	}
	// A running turn, then one queued behind it.
	t4, err := e.c.StartTurn(tctx(t), e.sid, "hold")
	require.NoError(t, err)
	require.Eventually(t, func() bool { s, _ := fm.counts(); return s == 7 }, 30*time.Second, 10*time.Millisecond, "the held turn's request")
	busy("running", t4)
	queued, err := e.c.StartTurn(tctx(t), e.sid, "queued")
	require.NoError(t, err)
	busy("running", t4, "queued", queued)
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	untilTurnEnd(t, e.c, e.sid, t4)
	// A pending approval.
	require.NoError(t, e.c.Call(tctx(t), "session.setMode", map[string]string{"sessionId": e.sid, "mode": "interactive"}, nil))
	t5, err := e.c.StartTurn(tctx(t), e.sid, "ask")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)
	busy("pending", rid)
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	untilTurnEnd(t, e.c, e.sid, t5)
	require.NoError(t, e.c.Call(tctx(t), "session.setMode", map[string]string{"sessionId": e.sid, "mode": "auto"}, nil))

	// A dry run says exactly what would change, and changes nothing.
	before := stateOf(t, e)
	res, err := rewind(e.c, t, e.sid, t2, true, "dryRun")
	require.NoError(t, err)
	require.True(t, res.DryRun)
	require.Equal(t, t2, res.ToTurnID)
	require.Equal(t, "shell b", res.Input)
	require.Empty(t, res.Attachments)
	require.Equal(t, []protocol.RewoundTurn{{TurnID: t2, Input: "shell b"}, {TurnID: t3, Input: "write c"}, {TurnID: t4, Input: "hold"}, {TurnID: t5, Input: "ask"}}, res.DroppedTurns)
	require.Equal(t, []protocol.FileChange{{Path: "a.txt", Status: "M"}, {Path: "b.txt", Status: "D"}, {Path: "c.txt", Status: "D"}}, res.Files)
	require.Empty(t, res.Clobbered)
	require.Equal(t, 2, res.SnapshotTurn)
	require.Positive(t, res.DroppedMessages)
	require.Equal(t, before, stateOf(t, e), "a dry run changes nothing")

	// The clobber guard: the user edited c.txt after the last snapshot.
	require.NoError(t, os.WriteFile(filepath.Join(e.projDir, "c.txt"), []byte("the user's edit\n"), 0o644))
	before = stateOf(t, e)
	_, err = rewind(e.c, t, e.sid, t2, true)
	we := wireErr(t, err)
	require.Equal(t, client.CodeConflict, we.Code, we.Message)
	require.Equal(t, protocol.KindClobbered, we.Data.Kind)
	require.Equal(t, []string{"c.txt"}, we.Data.Files)
	require.Contains(t, we.Message, "c.txt")
	require.NotEmpty(t, we.Data.Message, "a text for people")
	require.Equal(t, before, stateOf(t, e), "a refused rewind changes nothing")
	res, err = rewind(e.c, t, e.sid, t2, true, "dryRun")
	require.NoError(t, err)
	require.Equal(t, []string{"c.txt"}, res.Clobbered, "a dry run names what the guard would refuse")

	res, err = rewind(e.c, t, e.sid, t2, true, "force")
	require.NoError(t, err)
	require.False(t, res.DryRun)
	require.Equal(t, "shell b", res.Input, "the composer gets the turn's input back")
	require.Equal(t, []protocol.FileChange{{Path: "a.txt", Status: "M"}, {Path: "b.txt", Status: "D"}, {Path: "c.txt", Status: "D"}}, res.Files)
	require.Equal(t, []string{"c.txt"}, res.Clobbered)
	require.Equal(t, map[string]string{"a.txt": "one\n"}, workspace(t, e.projDir), "the files are as before turn 2")
	require.Equal(t, []string{t1 + ":write a"}, historyTurns(t, e.c, e.sid), "the history is as before turn 2")
	evs = untilType(t, e.c, e.sid, string(protocol.EventSessionRewound))
	var rw protocol.SessionRewoundData
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &rw))
	require.Equal(t, protocol.SessionRewoundData{ToTurnID: t2, DroppedTurns: []string{t2, t3, t4, t5}, Files: res.Files}, rw)
	// A fork of the latest turn forks the latest kept one.
	var fork protocol.SessionCreateResult
	require.NoError(t, e.c.Call(tctx(t), "session.fork", map[string]string{"sessionId": e.sid}, &fork))
	require.Equal(t, t1, fork.Session.ForkedFrom.TurnID, "a dropped turn is never the one forked")
	require.Equal(t, []string{t1 + ":write a"}, historyTurns(t, e.c, fork.SessionID))
	_, err = rewind(e.c, t, e.sid, t1, false, "dryRun")
	require.NoError(t, err)

	// The next model request has the rewound history.
	n := len(fm.requests())
	t6 := turn("after")
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(fm.requests()[n], &body))
	var users []string
	for _, m := range body.Messages {
		if m.Role == "user" {
			users = append(users, fmt.Sprint(m.Content))
		}
	}
	require.Equal(t, []string{"write a", "after"}, users, "the model sees the history without the dropped turns")
	for _, gone := range []string{"shell b", "write c", "ran the shell", "hold", "echo two"} {
		require.NotContains(t, string(fm.requests()[n]), gone)
	}

	// A dropped turn is no longer in the history; a history-only rewind
	// leaves the files.
	_, err = rewind(e.c, t, e.sid, t3, false)
	require.Equal(t, client.CodeNotFound, client.Code(err), "%v", err)
	res, err = rewind(e.c, t, e.sid, t6, false)
	require.NoError(t, err)
	require.Empty(t, res.Files)
	require.Equal(t, []string{t1 + ":write a"}, historyTurns(t, e.c, e.sid))
	require.Equal(t, map[string]string{"a.txt": "one\n"}, workspace(t, e.projDir))
	// The log is append-only: a full replay has the dropped turns and both
	// rewinds.
	all, _ := replay(t, e.p, e.sid)
	require.Len(t, ofType(all, string(protocol.EventSessionRewound)), 2)
	require.Equal(t, 1, turnEnds(all)[t3])
}

// gitHold writes a git wrapper that, once gate/arm exists, holds the first
// `git … cat-file --batch` (a restore writing files back) until
// gate/release exists, writing its pid to gate/held/pid; it returns the
// PATH entry that puts it first.
func gitHold(t *testing.T, gate string) string {
	t.Helper()
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	wrapper := "#!/bin/sh\n" +
		"case \"$*\" in *'cat-file --batch')\n" +
		"  if [ -e '" + gate + "/arm' ] && mkdir '" + gate + "/held' 2>/dev/null; then\n" +
		"    echo $$ > '" + gate + "/held/pid'\n" +
		"    while [ ! -e '" + gate + "/release' ]; do sleep 0.05; done\n" +
		"  fi;;\n" +
		"esac\n" +
		"exec '" + realGit + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755))
	return "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
}

// TestE2ERewindKilledWhileRestoring: kill -9 while a rewind restores the
// workspace (held in its git cat-file, after the deletes, before the
// writes). The history and the log are the old ones (no session_rewound);
// the next start reports rewind_interrupted once; the same rewind again
// finishes the files (no clobber refusal over its own partial restore) and
// the history.
func TestE2ERewindKilledWhileRestoring(t *testing.T) {
	gate := t.TempDir()
	path := gitHold(t, gate)
	script := writeScript(t,
		calls("", toolCall("w1", "write_file", map[string]any{"path": "a.txt", "content": "one\n"})), text("wrote a"),
		calls("", toolCall("s2", "run_shell", map[string]any{"command": "echo two > b.txt && echo more >> a.txt"})), text("ran the shell"),
		calls("", toolCall("w3", "write_file", map[string]any{"path": "c.txt", "content": "three\n"})), text("wrote c"),
	)
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: realTemp(t)}
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script, path)
	e.c = e.p.connect(t)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	e.sid, err = e.c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto"})
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	var ids []string
	for _, text := range []string{"write a", "shell b", "write c"} {
		id, err := e.c.StartTurn(tctx(t), e.sid, text)
		require.NoError(t, err)
		untilTurnEnd(t, e.c, e.sid, id)
		ids = append(ids, id)
	}
	t2 := ids[1]
	history := historyTurns(t, e.c, e.sid)
	require.Len(t, history, 3)

	require.NoError(t, os.WriteFile(filepath.Join(gate, "arm"), nil, 0o600))
	called := make(chan error, 1)
	go func() {
		_, err := rewind(e.c, t, e.sid, t2, true)
		called <- err
	}()
	waitWritten(t, filepath.Join(gate, "held", "pid"))
	e.p.kill9(t)
	b, err := os.ReadFile(filepath.Join(gate, "held", "pid"))
	require.NoError(t, err)
	if gitPID, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		if proc, err := os.FindProcess(gitPID); err == nil {
			_ = proc.Kill() // the restore's git dies with the sidecar
		}
	}
	require.NoError(t, os.Remove(filepath.Join(gate, "arm")))
	require.NoError(t, os.WriteFile(filepath.Join(gate, "release"), nil, 0o600))
	require.Error(t, <-called, "the rewind never answered")
	require.Equal(t, map[string]string{"a.txt": "one\nmore\n"}, workspace(t, e.projDir), "killed mid-restore: deleted, not yet written back")

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	evs, _ := replay(t, p2, e.sid)
	require.Empty(t, ofType(evs, string(protocol.EventSessionRewound)), "the history was not rewound")
	reports := ofType(evs, string(protocol.EventRewindInterrupted))
	require.Len(t, reports, 1)
	var ri protocol.RewindInterruptedData
	require.NoError(t, json.Unmarshal(reports[0].Data, &ri))
	require.Equal(t, t2, ri.ToTurnID)
	require.Equal(t, 2, ri.SnapshotTurn)
	require.NotEmpty(t, ri.Message)
	c2 := p2.connect(t)
	require.Equal(t, history, historyTurns(t, c2, e.sid), "the old history, whole")

	res, err := rewind(c2, t, e.sid, t2, true, "dryRun")
	require.NoError(t, err)
	require.Equal(t, []protocol.FileChange{{Path: "a.txt", Status: "M"}}, res.Files, "what the interrupted restore left")
	require.Empty(t, res.Clobbered, "its own partial restore is no clobber")
	_, err = rewind(c2, t, e.sid, t2, true)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a.txt": "one\n"}, workspace(t, e.projDir))
	require.Equal(t, history[:1], historyTurns(t, c2, e.sid))
	require.NoError(t, c2.Close())

	// Reported once.
	require.NoError(t, p2.stdin.Close())
	require.True(t, p2.waitFor(15*time.Second))
	p3 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	evs, _ = replay(t, p3, e.sid)
	require.Len(t, ofType(evs, string(protocol.EventRewindInterrupted)), 1)
	require.Len(t, ofType(evs, string(protocol.EventSessionRewound)), 1)
}

// TestE2ERewindExpiredSnapshot: under a 16 MiB snapshot cap the oldest
// turns' snapshots expire; rewinding the files to before such a turn is
// -32003 snapshot_expired naming the turn (a dry run too), and nothing
// changes; the history alone can still be rewound.
func TestE2ERewindExpiredSnapshot(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const turns = 5
	var script []map[string]any
	for i := 1; i <= turns; i++ {
		script = append(script,
			calls("", toolCall(fmt.Sprintf("w%d", i), "write_file", map[string]any{"path": "turn.txt", "content": strconv.Itoa(i)})),
			text(fmt.Sprintf("turn %d written", i)))
	}
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: realTemp(t)}
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, script...))
	e.c = e.p.connect(t)
	var pr struct {
		ProjectID string `json:"projectId"`
	}
	require.NoError(t, e.c.Call(tctx(t), "project.open", map[string]string{"path": e.projDir, "vcs": "shadow"}, &pr))
	require.NoError(t, e.c.Call(tctx(t), "project.setSettings", map[string]any{"projectId": pr.ProjectID, "snapshotCapBytes": 16 << 20}, nil))
	var err error
	e.sid, err = e.c.CreateSession(tctx(t), pr.ProjectID, map[string]any{"mode": "auto"})
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	raw := make([]byte, 6<<20*3/4)
	var ids []string
	for i := 1; i <= turns; i++ {
		// The user rewrites a 6 MB file (~4.5 MB zlib'd) before each turn.
		_, err := rand.Read(raw)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(e.projDir, "data.txt"), []byte(base64.StdEncoding.EncodeToString(raw)), 0o644))
		id, err := e.c.StartTurn(tctx(t), e.sid, fmt.Sprintf("turn %d", i))
		require.NoError(t, err)
		untilTurnEnd(t, e.c, e.sid, id)
		ids = append(ids, id)
	}
	var vt protocol.VCSTurnsResult
	require.Eventually(t, func() bool {
		err := e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &vt)
		return err == nil && len(vt.Turns) == turns && vt.Turns[0].Expired
	}, 30*time.Second, 50*time.Millisecond, "the oldest snapshot expired")
	require.Equal(t, ids[0], vt.Turns[0].TurnID, "an expired turn still says which turn it was")

	before := stateOf(t, e)
	for _, opts := range [][]string{{"dryRun"}, nil, {"force"}} {
		_, err := rewind(e.c, t, e.sid, ids[0], true, opts...)
		we := wireErr(t, err)
		require.Equal(t, client.CodeConflict, we.Code, we.Message)
		require.Equal(t, protocol.KindSnapshotExpired, we.Data.Kind)
		require.Contains(t, we.Message, ids[0], "names the turn")
	}
	require.Equal(t, before, stateOf(t, e), "nothing changed")
	res, err := rewind(e.c, t, e.sid, ids[0], false)
	require.NoError(t, err)
	require.Len(t, res.DroppedTurns, turns)
	require.Empty(t, historyTurns(t, e.c, e.sid))
}
