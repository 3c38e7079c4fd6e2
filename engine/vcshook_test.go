package engine

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/vcs"
)

func vcsTemp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return dir
}

func TestVCSHookRecordsTurns(t *testing.T) {
	ctx := context.Background()
	ws := vcsTemp(t)
	p := vcs.ResolvePlan(ctx, ws, vcs.Config{ShadowRoot: vcsTemp(t), Mode: vcs.ModeShadow})
	require.True(t, p.Enabled(), "plan: %+v", p)
	s := vcs.NewSession(p, "hooked")
	h := NewVCSHook(s)
	write := func(content string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, "made.txt"), []byte(content), 0o644))
	}

	h.OnTurnStart("make a file")
	h.OnToolStarted("write_file") // the workspace changes only through tools
	write("made\n")
	h.OnTurnEnd("completed", 3, []string{"made.txt"})
	h.OnTurnStart("just look")
	h.OnTurnEnd("completed", 1, nil)
	h.OnTurnStart("stop")
	h.OnToolStarted("write_file")
	write("changed\n")
	h.OnTurnEnd("interrupted", 1, nil)

	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 2, "the turn that changed nothing gets no number")
	require.Equal(t, 1, turns[0].Number)
	require.Equal(t, "completed", turns[0].Status)
	require.Equal(t, "interrupted", turns[1].Status)
	require.Len(t, turns[1].Files, 1)
	require.Equal(t, "made.txt", turns[1].Files[0].Path)

	// It composes with other hooks.
	var _ Hook = CompositeHook{BaseHook{}, h}
}

func TestVCSHookLogsFailuresAndNeverPanics(t *testing.T) {
	var logs bytes.Buffer
	ws := vcsTemp(t)
	p := vcs.ResolvePlan(context.Background(), ws, vcs.Config{ShadowRoot: vcsTemp(t), Mode: vcs.ModeShadow})
	p.Git = "/no/such/git" // the binary vanished after the plan was made
	h := NewVCSHook(vcs.NewSession(p, "broken")).(*vcsHook)
	h.log = slog.New(slog.NewTextHandler(&logs, nil))
	require.NotPanics(t, func() {
		h.OnTurnStart("x")
		h.OnToolStarted("write_file")
		h.OnTurnEnd("completed", 1, nil)
	})
	require.Contains(t, logs.String(), "vcs snapshot failed")
	require.Contains(t, logs.String(), "commit turn")

	// A hook over an off session, or over no session, does nothing.
	off := NewVCSHook(vcs.NewSession(vcs.ResolvePlan(context.Background(), ws, vcs.Config{}), "off"))
	require.NotPanics(t, func() { off.OnTurnStart("x"); off.OnToolStarted("x"); off.OnTurnEnd("completed", 1, nil) })
	require.NotPanics(t, func() { NewVCSHook(nil).OnToolStarted("x"); NewVCSHook(nil).OnTurnEnd("completed", 1, nil) })
}

// A turn that runs no tool takes no snapshot: a file changed meanwhile by
// someone else is not the turn's, and is recorded by the next snapshot.
func TestVCSHookChatTurnTakesNoSnapshot(t *testing.T) {
	ctx := context.Background()
	ws := vcsTemp(t)
	p := vcs.ResolvePlan(ctx, ws, vcs.Config{ShadowRoot: vcsTemp(t), Mode: vcs.ModeShadow})
	require.True(t, p.Enabled(), "plan: %+v", p)
	s := vcs.NewSession(p, "chat")
	h := NewVCSHook(s)
	h.OnTurnStart("hello")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "user.txt"), []byte("the user's\n"), 0o644))
	h.OnTurnEnd("completed", 1, nil)
	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Empty(t, turns, "a chat turn is never a numbered turn")

	h.OnTurnStart("make a file")
	h.OnToolStarted("write_file")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "made.txt"), []byte("made\n"), 0o644))
	h.OnTurnEnd("completed", 2, []string{"made.txt"})
	turns, err = s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Len(t, turns[0].Files, 1, "only the tool's file is the turn's")
	require.Equal(t, "made.txt", turns[0].Files[0].Path)
}
