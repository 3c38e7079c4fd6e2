//go:build !windows

package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2ESnapshotStorageIsBounded (issue 31, item 5): a project's snapshot
// cap is a setting (a cap under 16 MiB is refused, naming the field); a
// 9 MB binary file is left out of every snapshot and vcs.turns says so;
// five turns, each after the user rewrote a 6 MB file, go over a 16 MiB
// cap, so the oldest turns expire: vcs.turns marks them, vcs.usage stays
// under the cap, restoring turn 1 is -32003 snapshot_expired naming it,
// a recent turn restores; session.delete frees the snapshots.
func TestE2ESnapshotStorageIsBounded(t *testing.T) {
	const turns = 5
	var script []map[string]any
	for i := 1; i <= turns; i++ {
		script = append(script,
			calls("", toolCall(fmt.Sprintf("w%d", i), "write_file", map[string]any{"path": "turn.txt", "content": strconv.Itoa(i)})),
			text(fmt.Sprintf("turn %d written", i)))
	}
	dir := realTemp(t)
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: dir}
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, script...))
	e.c = e.p.connect(t)
	var pr struct {
		ProjectID string `json:"projectId"`
		Settings  struct {
			VCS              string `json:"vcs"`
			SnapshotCapBytes int64  `json:"snapshotCapBytes"`
		} `json:"settings"`
	}
	require.NoError(t, e.c.Call(tctx(t), "project.open", map[string]string{"path": dir, "vcs": "shadow"}, &pr))
	require.Equal(t, int64(2<<30), pr.Settings.SnapshotCapBytes, "the default cap")

	err := e.c.Call(tctx(t), "project.setSettings", map[string]any{"projectId": pr.ProjectID, "snapshotCapBytes": 1000}, nil)
	var we *client.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeInvalidParams, we.Code)
	require.Equal(t, "snapshotCapBytes", we.Data.Field)
	const capBytes = 16 << 20
	require.NoError(t, e.c.Call(tctx(t), "project.setSettings", map[string]any{"projectId": pr.ProjectID, "snapshotCapBytes": capBytes}, &pr))
	require.Equal(t, int64(capBytes), pr.Settings.SnapshotCapBytes)
	require.Equal(t, "shadow", pr.Settings.VCS)

	e.sid, err = e.c.CreateSession(tctx(t), pr.ProjectID, map[string]any{"mode": "auto"})
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)

	binary := make([]byte, 9<<20) // NUL bytes: binary, over 8 MiB
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blob.bin"), binary, 0o644))
	raw := make([]byte, 6<<20*3/4)
	for i := 1; i <= turns; i++ {
		// The user rewrites a 6 MB file (random text: ~4.5 MB zlib'd),
		// snapshotted before the turn.
		_, err := rand.Read(raw)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "data.txt"), []byte(base64.StdEncoding.EncodeToString(raw)), 0o644))
		_, err = e.c.StartTurn(tctx(t), e.sid, fmt.Sprintf("turn %d", i))
		require.NoError(t, err)
		untilType(t, e.c, e.sid, "turn_end")
	}

	type wireTurn struct {
		Number  int  `json:"number"`
		Expired bool `json:"expired"`
		Files   []struct {
			Path string `json:"path"`
		} `json:"files"`
		Omitted []struct {
			Path   string `json:"path"`
			Size   int64  `json:"size"`
			Reason string `json:"reason"`
		} `json:"omitted"`
	}
	var res struct {
		Turns []wireTurn `json:"turns"`
	}
	// The end-of-turn snapshot (and its collection) may still run when
	// turn_end arrives.
	require.Eventually(t, func() bool {
		err := e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &res)
		return err == nil && len(res.Turns) == turns && !res.Turns[turns-1].Expired && res.Turns[0].Expired
	}, 30*time.Second, 50*time.Millisecond, "five turns, the oldest expired")
	last := res.Turns[turns-1]
	require.Len(t, last.Omitted, 1)
	require.Equal(t, "blob.bin", last.Omitted[0].Path)
	require.Equal(t, "binary", last.Omitted[0].Reason)
	require.Equal(t, int64(9<<20), last.Omitted[0].Size)
	require.Equal(t, "turn.txt", res.Turns[0].Files[0].Path, "an expired turn still says what it changed")

	var u protocol.VCSUsageResult
	require.NoError(t, e.c.Call(tctx(t), "vcs.usage", map[string]string{"projectId": pr.ProjectID}, &u))
	require.Equal(t, int64(capBytes), u.CapBytes)
	require.LessOrEqual(t, u.Bytes, int64(capBytes), "%+v", u)
	require.Greater(t, u.Bytes, int64(4<<20), "the kept snapshots hold the 6 MB file: %+v", u)
	require.Equal(t, turns, u.Turns+u.ExpiredTurns, "%+v", u)
	require.Positive(t, u.ExpiredTurns, "%+v", u)

	err = e.c.Call(tctx(t), "vcs.restore", map[string]any{"sessionId": e.sid, "turn": 1}, nil)
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeConflict, we.Code)
	require.Equal(t, protocol.KindSnapshotExpired, we.Data.Kind)
	require.Contains(t, we.Message, "turn 1 of session "+e.sid)
	require.NotEmpty(t, we.Data.Message, "a text for people")

	var restored protocol.VCSRestoreResult
	require.NoError(t, e.c.Call(tctx(t), "vcs.restore", map[string]any{"sessionId": e.sid, "turn": turns - 1}, &restored))
	require.Contains(t, restored.Restored, "turn.txt")
	got, err := os.ReadFile(filepath.Join(dir, "turn.txt"))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(turns-1), string(got))
	require.FileExists(t, filepath.Join(dir, "blob.bin"), "left-out files are left alone")

	require.NoError(t, e.c.Call(tctx(t), "session.delete", map[string]string{"sessionId": e.sid}, nil))
	require.NoError(t, e.c.Call(tctx(t), "vcs.usage", map[string]string{"projectId": pr.ProjectID}, &u))
	require.Less(t, u.Bytes, int64(1<<20), "the deleted session's snapshots are freed: %+v", u)
	require.Zero(t, u.Turns+u.ExpiredTurns, "%+v", u)
}
