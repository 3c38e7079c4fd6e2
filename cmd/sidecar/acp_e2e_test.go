package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"
)

// fakeEditor is the editor side of `sidecar acp`: it records the updates
// and allows every permission once. It offers no fs/* and no terminals.
type fakeEditor struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
	// asked, when set, gets each permission request's title, and the
	// answer then waits for release.
	asked   chan string
	release chan struct{}
	// answer, when set, chooses the option of every permission request.
	answer func(sdk.RequestPermissionRequest) sdk.PermissionOptionId
}

var _ sdk.Client = (*fakeEditor)(nil)

func (e *fakeEditor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n)
	return nil
}

func (e *fakeEditor) RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	if e.answer != nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(e.answer(r))}, nil
	}
	if e.asked != nil {
		title := ""
		if r.ToolCall.Title != nil {
			title = *r.ToolCall.Title
		}
		e.asked <- title
		select {
		case <-e.release:
		case <-ctx.Done():
			return sdk.RequestPermissionResponse{}, ctx.Err()
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}, nil
}

var errNotOffered = errors.New("not offered")

func (e *fakeEditor) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNotOffered
}

func (e *fakeEditor) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNotOffered
}

func (e *fakeEditor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNotOffered
}

func (e *fakeEditor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNotOffered
}

func (e *fakeEditor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNotOffered
}

func (e *fakeEditor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNotOffered
}

func (e *fakeEditor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNotOffered
}

// text is everything the editor was shown of one kind in a session.
func (e *fakeEditor) text(sid, kind string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, n := range e.updates {
		if string(n.SessionId) != sid {
			continue
		}
		u := n.Update
		switch {
		case kind == "user" && u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			b.WriteString(u.UserMessageChunk.Content.Text.Text)
		case kind == "agent" && u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// acpProc is one running `sidecar acp` and the editor connected to it.
type acpProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	done   chan struct{}
	err    error
	ed     *fakeEditor
	conn   *sdk.ClientSideConnection
}

func spawnACP(t *testing.T, dataDir string, env ...string) *acpProc {
	t.Helper()
	return spawnACPWith(t, dataDir, &fakeEditor{}, env...)
}

// spawnACPWith is spawnACP with the editor given.
func spawnACPWith(t *testing.T, dataDir string, ed *fakeEditor, env ...string) *acpProc {
	t.Helper()
	cmd := exec.Command(sidecarBin, "acp", "--data-dir", dataDir, "--log-level", "debug")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &acpProc{cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, done: make(chan struct{}), ed: ed}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	p.conn = sdk.NewClientSideConnection(p.ed, stdin, stdout)
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("sidecar acp stderr:\n%s", p.stderr.String())
		}
	})
	_, err = p.conn.Initialize(tctx(t), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	require.NoError(t, err, p.stderr.String())
	return p
}

// stop closes stdin (the editor went away) and reports whether the process
// exited cleanly.
func (p *acpProc) stop(t *testing.T) bool {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("sidecar acp did not exit on stdin EOF")
	}
	<-p.conn.Done()
	return p.err == nil
}

// TestE2EACPJoinsTheRunningSidecar: with a desktop sidecar running on the
// data dir, `sidecar acp` drives it: a session of the shell loads in the
// editor with its history, a session of the editor is listed by the shell,
// and prompts run in the owner's engine.
func TestE2EACPJoinsTheRunningSidecar(t *testing.T) {
	script := writeScript(t, text("answer to the shell"), text("answer to the editor"))
	e := setup(t, script, nil)

	// The endpoint the owner published: private, and not the shell's token.
	ep := filepath.Join(e.dataDir, endpointFile)
	fi, err := os.Stat(ep)
	require.NoError(t, err)
	if os.PathSeparator == '/' {
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	b, err := os.ReadFile(ep)
	require.NoError(t, err)
	require.NotContains(t, string(b), e.p.ready.Token)

	_, err = e.c.StartTurn(tctx(t), e.sid, "hi from the shell")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "turn_end")

	a := spawnACP(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	_, err = a.conn.LoadSession(tctx(t), sdk.LoadSessionRequest{SessionId: sdk.SessionId(e.sid), Cwd: e.projDir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	require.Equal(t, "hi from the shell", a.ed.text(e.sid, "user"))
	require.Equal(t, "answer to the shell", a.ed.text(e.sid, "agent"))

	ns, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: e.projDir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.list", map[string]any{"projectId": pid}, &list))
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, s.SessionID)
	}
	require.Contains(t, ids, string(ns.SessionId))

	res, err := a.conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi from the editor")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	require.Equal(t, "answer to the editor", a.ed.text(string(ns.SessionId), "agent"))

	require.True(t, a.stop(t), "sidecar acp exits cleanly: %s", a.stderr.String())
	// The owner is unaffected.
	_, err = e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
}

// TestE2EACPOwnsTheDataDir: a `sidecar acp` started first owns the data
// dir; a second one joins it.
func TestE2EACPOwnsTheDataDir(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	proj := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	script := writeScript(t, text("first"), text("second"))
	a := spawnACP(t, dataDir, "ZQAGENT_SCRIPT="+script)
	s1, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	_, err = a.conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s1.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("one")}})
	require.NoError(t, err)

	b := spawnACP(t, dataDir, "ZQAGENT_SCRIPT="+script)
	_, err = b.conn.LoadSession(tctx(t), sdk.LoadSessionRequest{SessionId: s1.SessionId, Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	require.Equal(t, "first", b.ed.text(string(s1.SessionId), "agent"))
	require.Contains(t, b.stderr.String(), "joining it")
	// A desktop sidecar started now takes the data dir over: see
	// TestE2EACPHandsTheDataDirToTheApp.
}

// TestE2EACPAnswersAPendingApproval: an approval the desktop app left open
// is asked again in the editor after session/load, and the editor's answer
// lets the owner's turn go on.
func TestE2EACPAnswersAPendingApproval(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "touch from-editor.txt"})),
		text("ran it"))
	e := setup(t, script, nil)
	_, err := e.c.StartTurn(tctx(t), e.sid, "run it")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "permission_required")

	a := spawnACP(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	_, err = a.conn.LoadSession(tctx(t), sdk.LoadSessionRequest{SessionId: sdk.SessionId(e.sid), Cwd: e.projDir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end") // the editor allowed it once
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	_, err = os.Stat(filepath.Join(e.projDir, "from-editor.txt"))
	require.NoError(t, err)
}
