package backend_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// produced_files has one form, workspace-relative with '/', whether the
// model named the file absolutely, relatively or inside a patch.
func TestProducedFilesAreWorkspaceRelative(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	abs := filepath.Join(ws, "sub", "abs.txt")
	patch := "*** Begin Patch\n*** Add File: sub/patched.txt\n+x\n*** End Patch\n"
	p := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{
			call("w1", "write_file", fmt.Sprintf(`{"path":%q,"content":"a\n"}`, abs)),
			call("w2", "write_file", `{"path":"./rel.txt","content":"b\n"}`),
			call("p1", "apply_patch", fmt.Sprintf(`{"patch":%q}`, patch)),
		}},
		scripted.Response{Text: "done"})
	e, err := backend.NewEngine(backend.EngineOptions{Workspace: ws, Model: "m", Provider: p, Lang: "en", Mode: permission.ModeAuto, NoCompaction: true})
	require.NoError(t, err)
	defer e.Close()
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "write"}}))
	for _, f := range find[protocol.ToolFinishedData](evs) {
		require.Equal(t, protocol.ToolOK, f.Status, "%s: %s", f.Name, f.ResultPreview)
	}
	require.Equal(t, []string{"sub/abs.txt", "rel.txt", "sub/patched.txt"}, last(evs).ProducedFiles)
}
