package ipc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools/media"
)

// TestQueuedTurnAttachmentsAfterRestart: a turn a previous process
// acknowledged and never started runs at the next start with its
// attachments, read from the session folder when the model request is
// built (the queued job holds their paths, not their bytes).
func TestQueuedTurnAttachmentsAfterRestart(t *testing.T) {
	ctx := context.Background()
	dataDir := filepath.Join(t.TempDir(), "data")
	st, err := store.Open(ctx, dataDir, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) }) // after the server's close
	p, err := st.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	ss, err := st.CreateSession(ctx, store.Session{ProjectID: p.ID, Model: "m"})
	require.NoError(t, err)
	payload := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 4096)...)
	refs, err := media.SaveAttachments(st.SessionDir(ss.ID), []llm.Attachment{{Name: "shot.png", MimeType: "image/png", DataURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(payload)}})
	require.NoError(t, err)
	in, err := json.Marshal(map[string]any{"text": "look", "refs": refs})
	require.NoError(t, err)
	_, err = st.EnqueueTurn(ctx, ss.ID, store.QueuedTurn{TurnID: "turn_q1", Kind: store.TurnStart, Input: in}, "")
	require.NoError(t, err)

	prov := scripted.New(scripted.Response{Text: "seen"})
	ts := startServer(t, withProvider(prov), func(o *Options) { o.Store, o.DataDir = st, dataDir })
	c := ts.dial(t)
	_, err = c.Subscribe(tctx(t), ss.ID, 0)
	require.NoError(t, err)
	end := nextOfType(t, c, ss.ID, "turn_end")
	require.Equal(t, "turn_q1", end.TurnID)
	reqs := prov.Requests()
	require.Len(t, reqs, 1)
	var got []llm.Attachment
	for _, m := range reqs[0].Messages {
		got = append(got, m.Attachments...)
	}
	require.Len(t, got, 1)
	require.Empty(t, got[0].DataURL, "the job holds the file's path, not its bytes")
	url, err := got[0].URL()
	require.NoError(t, err)
	require.Equal(t, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(payload), url)
}
