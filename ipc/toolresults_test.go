package ipc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// TestSpilledToolResultReadBack: with TOOL_RESULT_DIR set, a result over
// the budget is spilled there (a folder per session) and read_file on the
// path the model was given works.
func TestSpilledToolResultReadBack(t *testing.T) {
	resultDir := filepath.Join(t.TempDir(), "spill")
	t.Setenv("TOOL_RESULT_DIR", resultDir)
	t.Setenv("TOOL_RESULT_MAX_CHARS", "2000")
	prov := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "big", Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
		scripted.Response{Text: "that was long"},
	)
	ts := startServer(t, withProvider(prov))
	c := ts.dial(t)
	sid := ts.session(t, c, map[string]any{"vcs": "off"})
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("line %03d of a long file that the model reads", i+1))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ts.dir, "proj", "big.txt"), []byte(strings.Join(lines, "\n")), 0o644))
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	toolResults := func() []string {
		var got protocol.SessionGetResult
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
		var out []string
		for _, m := range got.Messages {
			if m.Role == llm.RoleTool {
				out = append(out, m.Content)
			}
		}
		return out
	}
	_, err = c.StartTurn(tctx(t), sid, "read big.txt")
	require.NoError(t, err)
	collectTurn(t, c, sid)
	res := toolResults()
	require.Len(t, res, 1)
	m := regexp.MustCompile(`saved to (\S+); read it with read_file`).FindStringSubmatch(res[0])
	require.NotNil(t, m, "the result was spilled: %s", res[0][max(0, len(res[0])-300):])
	path := m[1]
	require.True(t, filepath.IsAbs(path), path)
	real, err := filepath.EvalSymlinks(resultDir)
	require.NoError(t, err)
	rel, err := filepath.Rel(real, path)
	require.NoError(t, err, path)
	require.False(t, strings.HasPrefix(rel, ".."), "spilled under TOOL_RESULT_DIR: %s", path)
	require.Equal(t, sid, strings.Split(filepath.ToSlash(rel), "/")[0], "a folder per session")

	args, err := json.Marshal(map[string]any{"path": path, "start_line": 2, "end_line": 3})
	require.NoError(t, err)
	prov.Append(scripted.Response{ToolCalls: []llm.ToolCall{{ID: "back", Name: "read_file", Arguments: string(args)}}}, scripted.Response{Text: "read back"})
	_, err = c.StartTurn(tctx(t), sid, "read the saved result")
	require.NoError(t, err)
	for _, ev := range collectTurn(t, c, sid) {
		if ev.Type == "tool_finished" {
			require.Contains(t, string(ev.Data), `"status":"ok"`, string(ev.Data))
		}
	}
	res = toolResults()
	require.Len(t, res, 2)
	require.Contains(t, res[1], "line 002 of a long file")
	require.NotContains(t, res[1], "error_type")
}
