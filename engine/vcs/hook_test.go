package vcs

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zqagent/sidecar/engine"
)

func TestHookRecordsTurns(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := session(t, ws, ModeShadow, "hooked")
	h := NewHook(s)

	h.OnTurnStart("make a file")
	writeT(t, ws, "made.txt", "made\n")
	h.OnTurnEnd("completed", 3, []string{"made.txt"})
	h.OnTurnStart("just look")
	h.OnTurnEnd("completed", 1, nil)
	h.OnTurnStart("stop")
	writeT(t, ws, "made.txt", "changed\n")
	h.OnTurnEnd("interrupted", 1, nil)

	turns, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, numbers(turns))
	require.Equal(t, "completed", turns[0].Status)
	require.Equal(t, "interrupted", turns[1].Status)
	require.Equal(t, []string{"M made.txt"}, paths(turns[1].Files))

	// It composes with other hooks.
	var _ engine.Hook = engine.CompositeHook{engine.BaseHook{}, h}
}

func TestHookLogsFailuresAndNeverPanics(t *testing.T) {
	var logs bytes.Buffer
	ws := realTemp(t)
	p := ResolvePlan(context.Background(), ws, Config{ShadowRoot: testShadowRoot, Mode: ModeShadow})
	p.Git = "/no/such/git" // the binary vanished after the plan was made
	h := NewHook(NewSession(p, "broken")).(*Hook)
	h.log = slog.New(slog.NewTextHandler(&logs, nil))
	require.NotPanics(t, func() {
		h.OnTurnStart("x")
		h.OnTurnEnd("completed", 1, nil)
	})
	require.Contains(t, logs.String(), "vcs snapshot failed")
	require.Contains(t, logs.String(), "commit turn")

	// A hook over an off session, or over no session, does nothing.
	off := NewHook(NewSession(ResolvePlan(context.Background(), ws, Config{}), "off"))
	require.NotPanics(t, func() { off.OnTurnStart("x"); off.OnTurnEnd("completed", 1, nil) })
	require.NotPanics(t, func() { NewHook(nil).OnTurnEnd("completed", 1, nil) })
}
