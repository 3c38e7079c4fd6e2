//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"
)

// mcpEditor answers the editor's MCP server cards with mcpAnswer and
// allows every tool call once; it records the cards, the tool cards and
// how many server processes ran when each MCP card came.
type mcpEditor struct {
	fakeEditor
	bin       string
	mcpAnswer sdk.PermissionOptionId

	mu       sync.Mutex
	cards    []sdk.RequestPermissionRequest
	running  []int // processes of bin when each card came
	toolAsks []string
}

func newMCPEditor(t *testing.T, bin string, answer sdk.PermissionOptionId) *mcpEditor {
	e := &mcpEditor{bin: bin, mcpAnswer: answer}
	e.answer = func(r sdk.RequestPermissionRequest) sdk.PermissionOptionId {
		e.mu.Lock()
		defer e.mu.Unlock()
		if strings.HasPrefix(string(r.ToolCall.ToolCallId), "mcp-server-") {
			e.cards = append(e.cards, r)
			e.running = append(e.running, len(processesWith(t, bin)))
			return e.mcpAnswer
		}
		if r.ToolCall.Title != nil {
			e.toolAsks = append(e.toolAsks, *r.ToolCall.Title)
		}
		return "allow_once"
	}
	return e
}

// shown is every update the editor got, as JSON.
func (e *mcpEditor) shown(t *testing.T) string {
	e.fakeEditor.mu.Lock()
	defer e.fakeEditor.mu.Unlock()
	b, err := json.Marshal(e.updates)
	require.NoError(t, err)
	return string(b)
}

func buildMCPServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver-acp")
	out, err := exec.Command("go", "build", "-o", bin, "../../mcp/testdata/mcpserver").CombinedOutput()
	require.NoError(t, err, "build the test MCP server: %s", out)
	return bin
}

func stdioServer(name, bin, envName, envValue string) []sdk.McpServer {
	return []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: name, Command: bin, Args: []string{}, Env: []sdk.EnvVariable{{Name: envName, Value: envValue}}}}}
}

// TestE2EACPEditorMCPServers: an MCP server the editor passes in
// session/new is not started before the user allowed it through
// session/request_permission (a card that names its command line and the
// names of its env variables, never their values); allowed, the model calls
// its tool; "always" is remembered for the project, so the next session
// with the same server does not ask; refused, the server never starts and
// its tool is not offered. The env value reaches the server's process and
// nothing else: not the card, the data dir's files (SQLite, WAL) or the
// logs; nothing is written to the project's .agent/mcp.json.
func TestE2EACPEditorMCPServers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts the MCP server's processes in /proc")
	}
	bin := buildMCPServer(t)
	rb := make([]byte, 12)
	_, _ = rand.Read(rb)
	secret := "tok-" + hex.EncodeToString(rb)
	dataDir := filepath.Join(t.TempDir(), "data")
	proj := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	useIt := func(turns int) string {
		var steps []map[string]any
		for range turns {
			steps = append(steps, calls("", toolCall("m1", "mcp__ed__echo", map[string]any{"text": "via the editor's server"})), text("done"))
		}
		return writeScript(t, steps...)
	}
	prompt := func(a *acpProc, sid sdk.SessionId) {
		t.Helper()
		res, err := a.conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock("use it")}})
		require.NoError(t, err)
		require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	}

	// Allowed always: asked before anything starts, then its tool runs.
	ed := newMCPEditor(t, bin, "allow_always")
	a := spawnACPWith(t, dataDir, &ed.fakeEditor, "ZQAGENT_SCRIPT="+useIt(1))
	ns, err := a.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: stdioServer("ed", bin, "ED_TOKEN", secret)})
	require.NoError(t, err)
	require.Empty(t, processesWith(t, bin), "nothing starts before the user allowed it")
	prompt(a, ns.SessionId)
	ed.mu.Lock()
	require.Len(t, ed.cards, 1)
	require.Equal(t, []int{0}, ed.running, "the card comes before the server starts")
	card, _ := json.Marshal(ed.cards[0])
	require.Equal(t, []string{"mcp__ed__echo"}, ed.toolAsks, "its tool was offered and asked for as any MCP tool")
	ed.mu.Unlock()
	require.Contains(t, string(card), bin)
	require.Contains(t, string(card), "ED_TOKEN")
	require.NotContains(t, string(card), secret)
	require.Contains(t, ed.shown(t), "echo: via the editor's server")
	require.Len(t, processesWithEnv(t, "ED_TOKEN="+secret), 1, "the env value reaches the server")
	require.True(t, a.stop(t), "sidecar acp exits cleanly: %s", a.stderr.String())
	require.Empty(t, processesWith(t, bin), "the server lives as long as the editor's connection")

	// Remembered: the next session with the same server does not ask.
	ed2 := newMCPEditor(t, bin, "reject_once")
	b := spawnACPWith(t, dataDir, &ed2.fakeEditor, "ZQAGENT_SCRIPT="+useIt(2))
	ns2, err := b.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: stdioServer("ed", bin, "ED_TOKEN", secret)})
	require.NoError(t, err)
	prompt(b, ns2.SessionId)
	ed2.mu.Lock()
	require.Empty(t, ed2.cards, "allowed always: not asked again in the project")
	require.Equal(t, []string{"mcp__ed__echo"}, ed2.toolAsks)
	ed2.mu.Unlock()
	require.Contains(t, ed2.shown(t), "echo: via the editor's server")

	// Refused: another config (another env value) asks again; refused, it
	// never starts and its tool is not offered.
	ns3, err := b.conn.NewSession(tctx(t), sdk.NewSessionRequest{Cwd: proj, McpServers: stdioServer("ed", bin, "ED_TOKEN", secret+"-2")})
	require.NoError(t, err)
	res, err := b.conn.Prompt(tctx(t), sdk.PromptRequest{SessionId: ns3.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("use it")}})
	require.NoError(t, err)
	require.Equal(t, sdk.StopReasonEndTurn, res.StopReason)
	ed2.mu.Lock()
	require.Len(t, ed2.cards, 1)
	require.Equal(t, []string{"mcp__ed__echo"}, ed2.toolAsks, "no tool card for the refused server")
	ed2.mu.Unlock()
	require.Empty(t, processesWithEnv(t, "ED_TOKEN="+secret+"-2"), "the refused server never started")
	require.True(t, b.stop(t), "sidecar acp exits cleanly: %s", b.stderr.String())

	// The values are nowhere but in the server's process.
	require.NotContains(t, a.stderr.String(), secret)
	require.NotContains(t, b.stderr.String(), secret)
	require.NoError(t, filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		require.False(t, bytes.Contains(raw, []byte(secret)), "the env value is stored in %s", path)
		return nil
	}))
	_, err = os.Stat(filepath.Join(proj, ".agent", "mcp.json"))
	require.ErrorIs(t, err, fs.ErrNotExist, "the editor's servers are not the project's")
}
