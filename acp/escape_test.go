package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
)

// namingScript is a script that names sessions (llm.SessionNamer), as a
// real model does: its Chat answers are the names.
type namingScript struct{ *scripted.Provider }

func (namingScript) NamesSessions() bool { return true }

// TestDiffAndSessionTitleAreSafeToRender: over pipes against the real
// agent, an edit's diff content (path and texts) shows the characters a
// card flags escaped, with a ⚠ line before it, in both the tool_call update
// and the permission request; the session's name in session_info_update
// and session/list is escaped and marked ⚠ too.
func TestDiffAndSessionTitleAreSafeToRender(t *testing.T) {
	proj := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(proj, "a\u200c.txt"), []byte("old\\n"), 0o644))
	prov := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"a\u200c.txt","content":"rm -rf foo\u200dbar\\n"}`}}},
		scripted.Response{Text: "done"},
	)
	prov.AppendChat("Clean build\u200c dir")
	ed := &editor{}
	conn := serveInProcess(t, namingScript{prov}, ed)
	s, err := conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("write")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)

	wantPath := filepath.Join(proj, `a\u200c.txt`)
	check := func(content []sdk.ToolCallContent) {
		t.Helper()
		var note string
		var diff *sdk.ToolCallContentDiff
		for _, c := range content {
			if c.Diff != nil {
				diff = c.Diff
			} else if c.Content != nil && c.Content.Content.Text != nil && strings.Contains(c.Content.Content.Text.Text, "the diff's") {
				note = c.Content.Content.Text.Text
			}
		}
		require.NotNil(t, diff, "%+v", content)
		require.Equal(t, wantPath, diff.Path)
		require.Equal(t, `rm -rf foo\u200dbar\\n`, diff.NewText)
		require.NotNil(t, diff.OldText)
		require.Equal(t, `old\\n`, *diff.OldText, "both sides escaped: a backslash is not a change")
		require.Equal(t, "⚠ the diff's path and text hold characters a card flags (shown escaped).", note)
	}
	require.Len(t, ed.asked, 1)
	check(ed.asked[0].ToolCall.Content)
	ed.mu.Lock()
	var call *sdk.SessionUpdateToolCall
	for _, u := range ed.updates {
		if u.ToolCall != nil {
			call = u.ToolCall
		}
	}
	ed.mu.Unlock()
	require.NotNil(t, call, "the tool_call update")
	check(call.Content)

	// The session is named after the turn, on its own goroutine.
	const want = `⚠ Clean build\u200c dir`
	var title string
	require.Eventually(t, func() bool {
		ed.mu.Lock()
		defer ed.mu.Unlock()
		for _, u := range ed.updates {
			if u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil {
				title = *u.SessionInfoUpdate.Title
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "session_info_update")
	require.Equal(t, want, title)
	list, err := conn.ListSessions(tctx(t), sdk.ListSessionsRequest{Cwd: sdk.Ptr(proj)})
	require.NoError(t, err)
	require.Len(t, list.Sessions, 1)
	require.NotNil(t, list.Sessions[0].Title)
	require.Equal(t, want, *list.Sessions[0].Title)
}
