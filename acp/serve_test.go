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

	"github.com/zqagent/sidecar/engine/llm"
	"github.com/zqagent/sidecar/engine/llm/scripted"
	"github.com/zqagent/sidecar/ipc"
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

func (e *editor) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNo
}
func (e *editor) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNo
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
	_, err = conn.Initialize(tctx(t), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
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
