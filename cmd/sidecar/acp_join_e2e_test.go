package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"
)

// promptAsync runs session/prompt on its own goroutine.
func promptAsync(t *testing.T, a *acpProc, sid sdk.SessionId, text string) <-chan sdk.PromptResponse {
	t.Helper()
	out := make(chan sdk.PromptResponse, 1)
	ctx := tctx(t)
	go func() {
		res, err := a.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
		if err != nil {
			res.StopReason = sdk.StopReason("error: " + err.Error())
		}
		out <- res
	}()
	return out
}

func waitPrompt(t *testing.T, ch <-chan sdk.PromptResponse) sdk.PromptResponse {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-tctx(t).Done():
		t.Fatal("session/prompt did not return")
		return sdk.PromptResponse{}
	}
}

func waitAsked(t *testing.T, ed *fakeEditor) string {
	t.Helper()
	select {
	case title := <-ed.asked:
		return title
	case <-tctx(t).Done():
		t.Fatal("the editor was not asked")
		return ""
	}
}

// TestE2EACPHandsTheDataDirToTheApp: the desktop app starts while
// `sidecar acp` owns the data dir. The app's sidecar asks sidecar acp to hand
// the data dir over and starts; sidecar acp drives it from then on: the
// approval the editor was asked before the handover is still answerable,
// its answer resumes the turn in the app's process, the session is the
// app's, and later prompts run there. A second desktop sidecar still
// refuses to start (the app does not hand over).
func TestE2EACPHandsTheDataDirToTheApp(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	proj := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	ed := &fakeEditor{asked: make(chan string, 4), release: make(chan struct{})}
	a := spawnACPWith(t, dataDir, ed, "ZQAGENT_SCRIPT="+writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "touch handed-over.txt"}))))
	ns, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	prompted := promptAsync(t, a, ns.SessionId, "run it")
	waitAsked(t, ed)

	app := spawn(t, dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("ran it in the app"), text("second, in the app")))
	require.Contains(t, app.stderr.String(), "asking it to hand it over")
	c := app.connect(t)
	var got struct {
		Session struct {
			Status string `json:"status"`
		} `json:"session"`
		PendingRequests []struct {
			Kind string `json:"kind"`
		} `json:"pendingRequests"`
	}
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]any{"sessionId": string(ns.SessionId)}, &got))
	require.Len(t, got.PendingRequests, 1, "the approval survived the handover")
	require.Equal(t, "approval", got.PendingRequests[0].Kind)

	close(ed.release) // the editor allows it, after the handover
	res := waitPrompt(t, prompted)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	_, err = os.Stat(filepath.Join(proj, "handed-over.txt"))
	require.NoError(t, err)
	require.Contains(t, a.ed.text(string(ns.SessionId), "agent"), "ran it in the app")
	require.Eventually(t, func() bool { return strings.Contains(a.stderr.String(), "joining the new owner") }, 10*time.Second, 20*time.Millisecond)

	res = waitPrompt(t, promptAsync(t, a, ns.SessionId, "again"))
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	require.Contains(t, a.ed.text(string(ns.SessionId), "agent"), "second, in the app")

	out, err := exec.Command(sidecarBin, "--data-dir", dataDir).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "another sidecar is already running")
	require.True(t, a.stop(t), "sidecar acp exits cleanly: %s", a.stderr.String())
}

// TestE2EACPTakesOverWhenTheAppQuits: `sidecar acp` started while the
// desktop app runs drives the app's sidecar; when the app quits while the
// editor is being asked for an approval, sidecar acp takes the data dir
// over: the editor's answer resumes the turn in sidecar acp's own process,
// the session goes on, session/list lists it, and sidecar acp exits cleanly
// at the end (it used to exit 1 when the owner quit).
func TestE2EACPTakesOverWhenTheAppQuits(t *testing.T) {
	e := setup(t, writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "touch taken-over.txt"}))), nil)
	ed := &fakeEditor{asked: make(chan string, 4), release: make(chan struct{})}
	a := spawnACPWith(t, e.dataDir, ed, "ZQAGENT_SCRIPT="+writeScript(t, text("ran it in acp"), text("second, in acp")))
	ns, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: e.projDir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	prompted := promptAsync(t, a, ns.SessionId, "run it")
	waitAsked(t, ed)

	e.p.stdin.Close() // the app quits
	require.True(t, e.p.waitFor(20*time.Second), "the app's sidecar exits")
	require.NoError(t, e.p.waitErr)
	require.Eventually(t, func() bool { return strings.Contains(a.stderr.String(), "this process owns the data dir") }, 20*time.Second, 20*time.Millisecond)

	close(ed.release)
	res := waitPrompt(t, prompted)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	_, err = os.Stat(filepath.Join(e.projDir, "taken-over.txt"))
	require.NoError(t, err)
	require.Contains(t, a.ed.text(string(ns.SessionId), "agent"), "ran it in acp")

	res = waitPrompt(t, promptAsync(t, a, ns.SessionId, "again"))
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	require.Contains(t, a.ed.text(string(ns.SessionId), "agent"), "second, in acp")

	list, err := a.conn.ListSessions(tctx(t), sdk.ListSessionsRequest{Cwd: sdk.Ptr(e.projDir)})
	require.NoError(t, err)
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, string(s.SessionId))
	}
	require.ElementsMatch(t, []string{e.sid, string(ns.SessionId)}, ids, "both sessions of the project")
	require.True(t, a.stop(t), "sidecar acp exits cleanly: %s", a.stderr.String())
}

// TestE2EACPSessionLanguage: a session/new of sidecar acp runs in the
// editor user's OS locale (LANG of sidecar acp, not of the app it joined),
// or in session/new's _meta {"zqagent":{"lang"}}; the plan card sidecar acp
// writes is in the session's language, and session/list shows the sessions.
func TestE2EACPSessionLanguage(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	proj := t.TempDir()
	app := spawn(t, dataDir, "LC_ALL=", "LC_MESSAGES=", "LANG=ko_KR.UTF-8", "ZQAGENT_SCRIPT="+writeScript(t,
		calls("", toolCall("p1", "propose_plan", map[string]any{"plan": "1. read\n2. write"})), text("planned")))
	c := app.connect(t)
	ed := &fakeEditor{asked: make(chan string, 4), release: make(chan struct{})}
	close(ed.release)
	a := spawnACPWith(t, dataDir, ed, "LC_ALL=", "LC_MESSAGES=", "LANG=ja_JP.UTF-8")
	langOf := func(sid sdk.SessionId) string {
		var got struct {
			Session struct {
				Lang string `json:"lang"`
			} `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]any{"sessionId": string(sid)}, &got))
		return got.Session.Lang
	}
	ja, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	require.Equal(t, "ja", langOf(ja.SessionId), "the editor user's OS locale")
	zh, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}, Meta: map[string]any{"zqagent": map[string]any{"lang": "zh"}}})
	require.NoError(t, err)
	require.Equal(t, "zh", langOf(zh.SessionId), "_meta wins")
	_, err = a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}, Meta: map[string]any{"lang": "fr"}})
	require.Error(t, err, "a language without prompts is refused")

	res := waitPrompt(t, promptAsync(t, a, ja.SessionId, "plan it"))
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	require.Equal(t, "計画を承認する", waitAsked(t, ed))

	list, err := a.conn.ListSessions(tctx(t), sdk.ListSessionsRequest{})
	require.NoError(t, err)
	require.Len(t, list.Sessions, 2)
	require.Equal(t, ja.SessionId, list.Sessions[0].SessionId, "the newest first (the prompted one)")
	_, err = a.conn.ListSessions(tctx(t), sdk.ListSessionsRequest{Cursor: sdk.Ptr("x")})
	require.Error(t, err)
}

// TestE2EACPHelp: `sidecar acp --help` has its own usage, on stdout, exit 0.
func TestE2EACPHelp(t *testing.T) {
	out, err := exec.Command(sidecarBin, "acp", "--help").Output()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(out), "Usage: sidecar acp [flags]"), string(out))
	for _, want := range []string{"session/list", "hand the data dir", "_meta", "-data-dir"} {
		require.Contains(t, string(out), want)
	}
}
