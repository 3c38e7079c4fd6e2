package acp

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/store"
)

// editor is an in-process ACP client: it records the updates and answers
// permissions from answers (cancelled when empty).
type editor struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	asked   []sdk.RequestPermissionRequest
	answers []sdk.PermissionOptionId
	// hold, when set, makes RequestPermission wait until its context ends
	// (the agent withdrew the question) and then close withdrawn.
	hold      chan struct{}
	withdrawn chan struct{}
	// fs, when set, is offered at initialize and records the calls.
	fs     bool
	reads  []string
	writes []string
}

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n.Update)
	return nil
}

func (e *editor) RequestPermission(ctx context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	e.mu.Lock()
	e.asked = append(e.asked, r)
	hold := e.hold
	var id sdk.PermissionOptionId
	if len(e.answers) > 0 {
		id, e.answers = e.answers[0], e.answers[1:]
	}
	e.mu.Unlock()
	if hold != nil {
		close(hold)
		<-ctx.Done()
		close(e.withdrawn)
		return sdk.RequestPermissionResponse{}, ctx.Err()
	}
	if id == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(id)}, nil
}

var errNo = errors.New("not offered")

func (e *editor) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads = append(e.reads, r.Path)
	return sdk.ReadTextFileResponse{Content: "from the editor\n"}, nil
}
func (e *editor) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes = append(e.writes, r.Path)
	return sdk.WriteTextFileResponse{}, nil
}
func (e *editor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNo
}
func (e *editor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNo
}
func (e *editor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNo
}
func (e *editor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNo
}
func (e *editor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNo
}

func (e *editor) agentText() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, u := range e.updates {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// serveInProcess runs Serve on pipes against a store in a temp dir and
// returns the editor's connection; the cleanup closes the editor's side and
// waits for Serve to return.
func serveInProcess(t *testing.T, prov llm.Provider, ed *editor) *sdk.ClientSideConnection {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir, store.Options{})
	require.NoError(t, err)
	toAgentR, toAgentW := io.Pipe()
	toEditorR, toEditorW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, Options{Server: ipc.Options{Store: st, DataDir: dir, Provider: prov}, Version: "test"}, toAgentR, toEditorW)
		toEditorW.Close()
	}()
	conn := sdk.NewClientSideConnection(ed, toAgentW, toEditorR)
	t.Cleanup(func() {
		toAgentW.Close() // the editor went away
		select {
		case err := <-served:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatal("Serve did not return after the editor closed its side")
		}
		<-conn.Done()
		require.NoError(t, st.Close())
	})
	caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: ed.fs, WriteTextFile: ed.fs}}
	_, err = conn.Initialize(tctx(t), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	require.NoError(t, err)
	return conn
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestServeInProcess(t *testing.T) {
	prov := scripted.New(
		scripted.Response{Text: "hello", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "write_file", Arguments: `{"path":"a.txt","content":"x"}`}}},
		scripted.Response{Text: " bye"},
	)
	ed := &editor{}
	conn := serveInProcess(t, prov, ed)
	proj := t.TempDir()

	_, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: "nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}})
	var re *sdk.RequestError
	require.ErrorAs(t, err, &re)
	require.Equal(t, codeInvalidParams, re.Code)
	require.Contains(t, re.Message, "unknown session")

	s, err := conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	_, err = conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{}})
	require.ErrorAs(t, err, &re)
	require.Equal(t, codeInvalidParams, re.Code)

	// The editor cancels the permission request: the write is denied.
	res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("write")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	require.Equal(t, "hello bye", ed.agentText())
	require.Len(t, ed.asked, 1)
	_, err = os.Stat(filepath.Join(proj, "a.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestCancelWithdrawsTheQuestion: session/cancel while the editor shows an
// approval interrupts the turn, answers the prompt with cancelled and
// withdraws the question ($/cancel_request).
func TestCancelWithdrawsTheQuestion(t *testing.T) {
	prov := scripted.New(scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell", Arguments: `{"command":"touch x"}`}}})
	ed := &editor{hold: make(chan struct{}), withdrawn: make(chan struct{})}
	conn := serveInProcess(t, prov, ed)
	s, err := conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	go func() {
		<-ed.hold
		_ = conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: s.SessionId})
	}()
	res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("run")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonCancelled, res.StopReason)
	select {
	case <-ed.withdrawn:
	case <-time.After(10 * time.Second):
		t.Fatal("the question was not withdrawn")
	}
}

// TestEditorFSStaysInTheWorkspace: with the editor's fs/* offered and every
// approval allowed, a path outside the workspace never reaches the editor;
// one inside does, by its absolute path.
func TestEditorFSStaysInTheWorkspace(t *testing.T) {
	outside := t.TempDir()
	proj := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(proj, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "in.txt"), []byte("disk"), 0o644))
	tc := func(id, name, args string) llm.ToolCall { return llm.ToolCall{ID: id, Name: name, Arguments: args} }
	prov := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{tc("r1", "read_file", `{"path":"`+secret+`"}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{tc("r2", "read_file", `{"path":"link"}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{tc("w1", "write_file", `{"path":"../`+filepath.Base(outside)+`/x","content":"x"}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{tc("r3", "read_file", `{"path":"in.txt"}`)}},
		scripted.Response{Text: "done"},
	)
	ed := &editor{fs: true, answers: []sdk.PermissionOptionId{optAllowOnce, optAllowOnce, optAllowOnce, optAllowOnce, optAllowOnce}}
	conn := serveInProcess(t, prov, ed)
	s, err := conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	res, err := conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	ed.mu.Lock()
	defer ed.mu.Unlock()
	real, err := filepath.EvalSymlinks(filepath.Join(proj, "in.txt"))
	require.NoError(t, err)
	require.Equal(t, []string{real}, ed.reads)
	require.Empty(t, ed.writes)
	_, err = os.Stat(filepath.Join(outside, "x"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
