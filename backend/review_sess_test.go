package backend

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestImportOfRewoundSessionForksItsLiveTurn: a session rewound to before
// its last turn is exported and imported. The imported history is the
// kept turn's, so the import marks that turn, not the dropped one (whose
// turn_end is still in the log): session.fork of the dropped turn is
// refused as it is in the source, and session.fork without a turn forks
// the kept one with its history.
func TestImportOfRewoundSessionForksItsLiveTurn(t *testing.T) {
	p := scripted.New(scripted.Response{Text: "a1"}, scripted.Response{Text: "a2"})
	b := newTestBackend(t, p)
	ctx := t.Context()
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	sess, err := b.CreateSession(ctx, protocol.SessionCreateParams{ProjectID: proj.ProjectID, Model: "m", Title: "Rewound"})
	require.NoError(t, err)
	sid := sess.SessionID
	t1, err := b.StartTurn(ctx, sid, "one", nil)
	require.NoError(t, err)
	runIdle(t, b, sid)
	t2, err := b.StartTurn(ctx, sid, "two", nil)
	require.NoError(t, err)
	runIdle(t, b, sid)
	_, err = b.SessionRewind(ctx, protocol.SessionRewindParams{SessionID: sid, TurnID: t2.TurnID})
	require.NoError(t, err)

	// In the source, the dropped turn cannot be forked; the kept one can.
	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid, TurnID: t2.TurnID})
	require.ErrorIs(t, err, ErrConflict)
	srcFork, err := b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid})
	require.NoError(t, err)
	srcForked, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: srcFork.SessionID})
	require.NoError(t, err)
	require.Equal(t, t1.TurnID, srcForked.Session.ForkedFrom.TurnID)

	out := filepath.Join(t.TempDir(), "rewound.zqsession")
	_, err = b.ExportSession(ctx, protocol.SessionExportParams{SessionID: sid, Path: out})
	require.NoError(t, err)
	imp, err := b.ImportSession(ctx, protocol.SessionImportParams{ProjectID: proj.ProjectID, Path: out})
	require.NoError(t, err)

	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: imp.SessionID, TurnID: t2.TurnID})
	require.ErrorIs(t, err, ErrConflict, "the dropped turn's history is not the imported one")
	fork, err := b.ForkSession(ctx, protocol.SessionForkParams{SessionID: imp.SessionID})
	require.NoError(t, err, "the kept turn's history is the imported one")
	forked, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: fork.SessionID})
	require.NoError(t, err)
	require.Equal(t, t1.TurnID, forked.Session.ForkedFrom.TurnID)
	require.Equal(t, msgSummary(srcForked.Messages), msgSummary(forked.Messages))
	require.Equal(t, []string{"user:one", "assistant:a1"}, msgSummary(forked.Messages))

	// The imported session rewinds like its source: the dropped turn is
	// not in its history, the kept one is.
	_, err = b.SessionRewind(ctx, protocol.SessionRewindParams{SessionID: imp.SessionID, TurnID: t2.TurnID})
	require.ErrorIs(t, err, ErrNotFound)
	rw, err := b.SessionRewind(ctx, protocol.SessionRewindParams{SessionID: imp.SessionID, TurnID: t1.TurnID, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, "one", rw.Input)
	require.Equal(t, 2, rw.DroppedMessages)

	// Its files cannot be rewound to before an imported turn: the file
	// carried no snapshots (this read as "changed no file" before).
	_, err = b.SessionRewind(ctx, protocol.SessionRewindParams{SessionID: imp.SessionID, TurnID: t1.TurnID, Files: true, DryRun: true})
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorContains(t, err, "came with the import")
	_, err = b.SessionRewind(ctx, protocol.SessionRewindParams{SessionID: imp.SessionID, TurnID: t1.TurnID, Files: true})
	require.ErrorIs(t, err, ErrConflict)
}

// msgSummary is role:content of each message.
func msgSummary(msgs []protocol.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}
