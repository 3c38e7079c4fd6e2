package backend

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools/media"
)

// TestForkSession: a fork of the first of two turns has that turn's
// history (its attachment and its spilled tool result readable in the
// fork's own folder, the result's path in the history the fork's), the
// source's mode and grants, forkedFrom, and the next model request of the
// fork sends that history; the source is untouched. A running turn, a
// queued one and an unknown one are refused.
func TestForkSession(t *testing.T) {
	t.Setenv("TOOL_RESULT_MAX_CHARS", "300") // read_file's result of big.txt is spilled
	p := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
		scripted.Response{Text: "a1"},
		scripted.Response{Text: "a2"},
		scripted.Response{Text: "a3", Gate: "hold"},
		scripted.Response{Text: "a4"},
		scripted.Response{Text: "in the fork"},
	)
	b := newTestBackend(t, p)
	ctx := t.Context()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Repeat("0123456789\n", 200)), 0o644))
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: ws, VCS: protocol.VCSOff})
	require.NoError(t, err)
	sess, err := b.CreateSession(ctx, protocol.SessionCreateParams{ProjectID: proj.ProjectID, Model: "m", Title: "Work", Mode: protocol.ModeAuto})
	require.NoError(t, err)
	sid := sess.SessionID
	h, err := b.host(ctx, sid)
	require.NoError(t, err)
	png := func(name string) []media.Upload {
		return []media.Upload{{Name: name, MimeType: "image/png", DataURL: []byte("data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"+name)))}}
	}

	t1, err := b.StartTurn(ctx, sid, "one", png("one.png"))
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(ctx))
	g, err := b.opts.Store.Grants(ctx, sid)
	require.NoError(t, err)
	g.SessionTools = append(g.SessionTools, "write_file")
	require.NoError(t, b.opts.Store.SaveGrants(ctx, sid, g))
	_, err = b.StartTurn(ctx, sid, "two", png("two.png"))
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(ctx))
	t3, err := b.StartTurn(ctx, sid, "three", nil)
	require.NoError(t, err)
	<-p.Gate("hold").Reached()
	t4, err := b.StartTurn(ctx, sid, "four", nil)
	require.NoError(t, err)

	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid, TurnID: t3.TurnID})
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorContains(t, err, "has not finished")
	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid, TurnID: t4.TurnID})
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorContains(t, err, "queued")
	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid, TurnID: "turn_nope"})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: "nope"})
	require.ErrorIs(t, err, store.ErrNotFound)

	// While turn three runs, turn one forks.
	fork, err := b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid, TurnID: t1.TurnID})
	require.NoError(t, err)
	require.NotEqual(t, sid, fork.SessionID)
	require.Equal(t, "Work (fork)", fork.Session.Title)
	require.Equal(t, &protocol.ForkedFrom{SessionID: sid, TurnID: t1.TurnID}, fork.Session.ForkedFrom)
	require.Equal(t, "auto", fork.Session.Mode)
	require.Equal(t, "idle", fork.Session.Status)
	require.Equal(t, 1, fork.Session.TaskCount)
	fg, err := b.opts.Store.Grants(ctx, fork.SessionID)
	require.NoError(t, err)
	require.Contains(t, fg.SessionTools, "write_file")

	view, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: fork.SessionID})
	require.NoError(t, err)
	require.Equal(t, fork.Session.ForkedFrom, view.Session.ForkedFrom)
	var roles []string
	var tool, user protocol.Message
	for _, m := range view.Messages {
		roles = append(roles, m.Role)
		switch m.Role {
		case "tool":
			tool = m
		case "user":
			user = m
		}
	}
	require.Equal(t, []string{"user", "assistant", "tool", "assistant"}, roles)
	require.Equal(t, "one", user.Content)
	require.Len(t, user.AttachmentRefs, 1)
	st := b.opts.Store
	forkDir, srcDir := st.SessionDir(fork.SessionID), st.SessionDir(sid)
	got, err := os.ReadFile(filepath.Join(forkDir, filepath.FromSlash(user.AttachmentRefs[0].Path)))
	require.NoError(t, err)
	require.Equal(t, "\x89PNG\r\n\x1a\none.png", string(got), "the attachment is readable in the fork's folder")
	spilled := filepath.Join(forkDir, "tool-results")
	require.Contains(t, tool.Content, spilled+string(filepath.Separator), "the spilled result's path is the fork's")
	require.NotContains(t, tool.Content, srcDir)
	ents, err := os.ReadDir(spilled)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	got, err = os.ReadFile(filepath.Join(spilled, ents[0].Name()))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(srcDir, "tool-results", ents[0].Name()))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	require.Contains(t, string(got), "0123456789")
	ents, err = os.ReadDir(filepath.Join(forkDir, media.AttachmentDir))
	require.NoError(t, err)
	require.Len(t, ents, 1, "turn two's attachment is not the fork's")

	evs, err := st.EventsAfter(ctx, fork.SessionID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, string(protocol.EventTurnEnd), evs[len(evs)-1].Type)
	require.Equal(t, t1.TurnID, evs[len(evs)-1].TurnID)
	for _, e := range evs {
		require.Equal(t, t1.TurnID, e.TurnID, "only turn one's events: %s", e.Type)
	}

	p.Gate("hold").Release()
	require.Eventually(t, func() bool { return !h.Running() && p.Remaining() == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, h.WaitIdle(ctx))

	// The fork's next request sends turn one's history, not turn two's.
	fh, err := b.host(ctx, fork.SessionID)
	require.NoError(t, err)
	_, err = b.StartTurn(ctx, fork.SessionID, "five", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Remaining() == 0 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, fh.WaitIdle(ctx))
	reqs := p.Requests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role != llm.RoleSystem {
			sent = append(sent, m.Role+":"+strings.SplitN(m.Content, "\n", 2)[0])
		}
	}
	require.Equal(t, "user:one", sent[0])
	require.Equal(t, "assistant:", sent[1])
	require.Equal(t, []string{"assistant:a1", "user:five"}, sent[3:])

	// A turn that ended without starting (it left the queue) is no turn
	// to fork, and not the last finished one.
	_, err = st.Append(ctx, sid, store.EventInput{TurnID: "turn_unstarted", Type: string(protocol.EventTurnEnd), MarkTurn: true})
	require.NoError(t, err)
	_, err = b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid, TurnID: "turn_unstarted"})
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorContains(t, err, "never started")

	// Absent turnId: the last finished turn (four); the source is
	// untouched by all of it.
	srcView, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: sid})
	require.NoError(t, err)
	latest, err := b.ForkSession(ctx, protocol.SessionForkParams{SessionID: sid})
	require.NoError(t, err)
	require.Equal(t, t4.TurnID, latest.Session.ForkedFrom.TurnID)
	lv, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: latest.SessionID})
	require.NoError(t, err)
	require.Equal(t, srcView.Messages, withRoot(lv.Messages, st.SessionDir(latest.SessionID), srcDir))
	again, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: sid})
	require.NoError(t, err)
	require.Equal(t, srcView.Messages, again.Messages)
	require.Nil(t, again.Session.ForkedFrom)
	require.Equal(t, "Work", again.Session.Title)
}

// withRoot puts the session folder from back where to is in tool messages.
func withRoot(msgs []protocol.Message, to, from string) []protocol.Message {
	out := make([]protocol.Message, len(msgs))
	for i, m := range msgs {
		m.Content = strings.ReplaceAll(m.Content, to, from)
		out[i] = m
	}
	return out
}
