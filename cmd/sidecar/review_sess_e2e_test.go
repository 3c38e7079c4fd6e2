//go:build !windows

package main

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2ERewindFork: through the real binary, a fork's own turn rewinds
// with its files; a turn that came with the fork has its snapshots in the
// source session only, so rewinding the fork's files to before it is
// refused (-32003, dry run too) instead of answering that no file changed;
// the history alone rewinds, and the workspace is left as it is.
func TestE2ERewindFork(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	fm := newFakeModel(t,
		fakeCall("write_file", map[string]any{"path": "a.txt", "content": "one\n"}), "wrote a", // source turn 1
		"just talk", // source turn 2
		fakeCall("write_file", map[string]any{"path": "b.txt", "content": "fork\n"}), "wrote b", // the fork's turn
	)
	e := setupEnv(t, modelEnv(fm), map[string]any{"mode": "auto", "title": "Rewind a fork"})
	turn := func(sid, text string) string {
		t.Helper()
		id, err := e.c.StartTurn(tctx(t), sid, text)
		require.NoError(t, err)
		evs := untilTurnEnd(t, e.c, sid, id)
		require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"], "turn %q", text)
		return id
	}
	t1 := turn(e.sid, "write a")
	t2 := turn(e.sid, "talk")

	var fork protocol.SessionCreateResult
	require.NoError(t, e.c.Call(tctx(t), "session.fork", map[string]any{"sessionId": e.sid, "turnId": t2}, &fork))
	fid := fork.SessionID
	_, err := e.c.Subscribe(tctx(t), fid, 0)
	require.NoError(t, err)
	t3 := turn(fid, "write b")
	require.Equal(t, map[string]string{"a.txt": "one\n", "b.txt": "fork\n"}, workspace(t, e.projDir))

	// The fork's own turn: its snapshot is the fork's.
	res, err := rewind(e.c, t, fid, t3, true)
	require.NoError(t, err)
	require.Equal(t, []protocol.FileChange{{Path: "b.txt", Status: "D"}}, res.Files)
	require.Equal(t, map[string]string{"a.txt": "one\n"}, workspace(t, e.projDir))

	// A copied turn: a.txt was written by it, in the source session.
	for _, opts := range [][]string{{"dryRun"}, nil} {
		_, err = rewind(e.c, t, fid, t1, true, opts...)
		we := wireErr(t, err)
		require.Equal(t, client.CodeConflict, we.Code, we.Message)
		require.Contains(t, we.Message, t1)
		require.Contains(t, we.Message, e.sid, "names the source session")
		require.Contains(t, we.Message, "files: false")
	}
	require.Equal(t, []string{t1 + ":write a", t2 + ":talk"}, historyTurns(t, e.c, fid), "the refusal changed nothing")

	res, err = rewind(e.c, t, fid, t1, false)
	require.NoError(t, err)
	require.Equal(t, "write a", res.Input)
	require.Empty(t, historyTurns(t, e.c, fid))
	require.Equal(t, map[string]string{"a.txt": "one\n"}, workspace(t, e.projDir), "files: false leaves the workspace")
	// The source is untouched: its turns and snapshot are there.
	require.Equal(t, []string{t1 + ":write a", t2 + ":talk"}, historyTurns(t, e.c, e.sid))
	res, err = rewind(e.c, t, e.sid, t1, true, "dryRun")
	require.NoError(t, err)
	require.Equal(t, []protocol.FileChange{{Path: "a.txt", Status: "D"}}, res.Files)
}
