//go:build !windows

package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func everything(t *testing.T) mcp.ServerConfig {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join("..", "testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(entry); err != nil || nodeErr != nil {
		if os.Getenv("ZQAGENT_SKIP_NPM") == "1" {
			t.Skip("ZQAGENT_SKIP_NPM=1: skipping the @modelcontextprotocol/server-everything test")
		}
		t.Fatalf("@modelcontextprotocol/server-everything is not installed (%v; node: %v): run `make deps` "+
			"(npm install in mcp/testdata/npm), or set ZQAGENT_SKIP_NPM=1", err, nodeErr)
	}
	return mcp.ServerConfig{Name: "everything", Type: mcp.TypeStdio, Command: []string{node, entry, "stdio"}, Enabled: true}
}

func TestEngineCallsMCPToolWithApproval(t *testing.T) {
	eager := false
	m := mcp.NewManager([]mcp.ServerConfig{everything(t)}, mcp.Options{Lazy: mcp.LazyOptions{Enabled: &eager}, TrustAll: true})
	defer func() {
		if err := m.CloseAll(); err != nil {
			t.Error(err)
		}
	}()
	reg := tools.NewRegistry()
	prov := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "mcp__everything__echo", Arguments: `{"message":"through the engine"}`}}},
		scripted.Response{Text: "The server echoed it."},
	)
	ws, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{
		Provider:    prov,
		Registry:    reg,
		Permissions: permission.New(permission.Options{Workspace: ws, Mode: permission.ModeInteractive}),
		Model:       "m",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	// The engine exists before the server connects: its tools appear in the
	// next model call all the same.
	m.Attach(reg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Connect(ctx, "everything"); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var asked []permission.Request
	eng.SetApprover(func(_ context.Context, req permission.Request) (permission.Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req)
		return permission.OutcomeOnce, nil
	})

	var perm *protocol.PermissionRequiredData
	var finished *protocol.ToolFinishedData
	for ev := range eng.Run(ctx, engine.Turn{Input: engine.Input{Text: "echo something"}}) {
		switch d := ev.Data.(type) {
		case protocol.PermissionRequiredData:
			perm = &d
		case *protocol.PermissionRequiredData:
			perm = d
		case protocol.ToolFinishedData:
			finished = &d
		case *protocol.ToolFinishedData:
			finished = d
		}
	}
	if perm == nil || perm.Name != "mcp__everything__echo" || perm.Category != "mcp" || perm.RiskLevel != "high" ||
		perm.Arguments["message"] != "through the engine" {
		t.Fatalf("permission_required = %+v", perm)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].ToolName != "mcp:everything/echo" || !asked[0].Metadata.RequiresApproval {
		t.Fatalf("approver asked %+v", asked)
	}
	mu.Unlock()
	if finished == nil || finished.Name != "mcp__everything__echo" || finished.Status != protocol.ToolOK ||
		!strings.Contains(finished.ResultPreview, "Echo: through the engine") {
		t.Fatalf("tool_finished = %+v", finished)
	}

	reqs := prov.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if !slices.ContainsFunc(reqs[0].Tools, func(s llm.ToolSchema) bool { return s.Function.Name == "mcp__everything__echo" }) {
		t.Fatal("the first model call did not see the MCP tool")
	}
	if !slices.ContainsFunc(reqs[1].Messages, func(msg llm.Message) bool {
		return msg.Role == llm.RoleTool && msg.ToolCallID == "call_1" && strings.Contains(msg.Content, "Echo: through the engine")
	}) {
		t.Fatalf("the tool result did not reach the model: %+v", reqs[1].Messages)
	}
}
