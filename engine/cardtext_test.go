package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/tools/interact"
)

// TestCardsSafeToRender: the interactive events flag text holding control
// characters, ANSI escapes, bidi overrides or invisible characters, and
// carry its escaped display form; clean text gets neither.
func TestCardsSafeToRender(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"x": "ls \u202e; rm -rf ~ \u202c# safe"})
	question, _ := json.Marshal(map[string]any{"question": "\x1b[2Jcontinue?", "options": []string{"yes", "no\u200b", "a\\b"}})
	plan, _ := json.Marshal(map[string]any{"plan": "1. read\n2. \rdone\tok"})
	outside := filepath.Join(t.TempDir(), "docs\u2066")
	require.NoError(t, os.Mkdir(outside, 0o755))
	dir, _ := json.Marshal(map[string]any{"path": outside, "reason": "clean reason"})
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", string(args)), call("c2", "danger", `{"x":"plain"}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("q1", "ask_user", string(question))}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("p1", "propose_plan", string(plan)), call("p2", "propose_plan", `{"plan":"1. a \u2764\ufe0f \ud83d\udc68\u200d\ud83d\udc69\n2. \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"}`)}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("d1", "request_directory", string(dir))}},
		scripted.Response{Text: "ok"})
	interact.RegisterAskTool(r.reg, r.eng.Interactor())
	interact.RegisterPlanTool(r.reg, r.eng.Interactor())
	interact.RegisterDirectoryTool(r.reg, r.eng.Interactor(), r.ws)
	r.eng.SetInteractor(&fakeHandlers{})
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeDeny, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, engine.StatusCompleted, last(evs).Status)

	perms := find[engine.PermissionRequiredData](evs)
	require.Len(t, perms, 2)
	require.Equal(t, []engine.TextWarning{{Field: "arguments.x", Kind: engine.WarnBidi}}, perms[0].Warnings)
	require.Equal(t, `ls \u202e; rm -rf ~ \u202c# safe`, perms[0].Display["arguments.x"])
	require.Empty(t, perms[1].Warnings)
	require.Nil(t, perms[1].Display)

	q := find[engine.AskUserQuestionData](evs)
	require.Len(t, q, 1)
	require.Equal(t, []engine.TextWarning{{Field: "question", Kind: engine.WarnANSI}, {Field: "options[1]", Kind: engine.WarnInvisible}}, q[0].Warnings)
	require.Equal(t, map[string]string{"question": `\x1b[2Jcontinue?`, "options[1]": `no\u200b`}, q[0].Display)

	p := find[engine.PlanProposedData](evs)
	require.Len(t, p, 2)
	require.Equal(t, []engine.TextWarning{{Field: "plan", Kind: engine.WarnControl}}, p[0].Warnings)
	require.Equal(t, "1. read\n2. \\x0ddone\tok", p[0].Display["plan"], "tabs and newlines stay, \\r is escaped")
	require.Empty(t, p[1].Warnings, "emoji sequences and ZWNJ in Persian are not flagged: %q", p[1].Plan)

	d := find[engine.DirectoryRequestedData](evs)
	require.Len(t, d, 1)
	require.Equal(t, []engine.TextWarning{{Field: "path", Kind: engine.WarnBidi}}, d[0].Warnings)
	require.True(t, strings.HasSuffix(d[0].Display["path"], `docs\u2066`), d[0].Display["path"])

	// On the wire: omitted when clean, present when not.
	b, err := json.Marshal(perms[1])
	require.NoError(t, err)
	require.NotContains(t, string(b), "warnings")
	b, err = json.Marshal(perms[0])
	require.NoError(t, err)
	require.Contains(t, string(b), `"warnings":[{"field":"arguments.x","kind":"bidi"}]`)
}
