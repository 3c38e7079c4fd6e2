package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/terminaltools"
	"github.com/zqagent/sidecar/tools/web"
	"github.com/zqagent/sidecar/vcs"
)

// The 21 builtin tools of seed §7.1.
var builtinTools = []string{
	"read_file", "list_files", "write_file", "replace_in_file",
	"run_shell", "shell_task_output", "shell_task_kill",
	"grep", "web_search", "web_fetch",
	"git_log", "git_status", "git_diff",
	"apply_patch", "apply_unified_diff",
	"ask_user", "propose_plan", "request_directory",
	"todo_write", "explore", "media",
}

// stepProvider answers each model request with the next step's tool call,
// computed from the history so far (to reuse ids the tools returned).
type stepProvider struct {
	steps []func(history []llm.Message) scripted.Response
	n     int
	inner *scripted.Provider
}

func (p *stepProvider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	if len(req.Tools) == 0 || strings.HasPrefix(req.Messages[0].Content, engine.Prompts("en").Explore[:20]) {
		// The explore subagent (read-only tools, its own prompt) reports at once.
		p.inner.Append(scripted.Response{Text: "explore report: the workspace has a README"})
		return p.inner.Stream(ctx, req)
	}
	if p.n < len(p.steps) {
		p.inner.Append(p.steps[p.n](req.Messages))
		p.n++
	} else {
		p.inner.Append(scripted.Response{Text: "every tool ran"})
	}
	return p.inner.Stream(ctx, req)
}

func (p *stepProvider) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	return p.inner.Chat(ctx, req)
}

type answerAll struct{}

func (answerAll) AskUser(context.Context, string, tools.Question) (string, error) {
	return "blue", nil
}
func (answerAll) ProposePlan(context.Context, string, tools.Plan) (tools.PlanAnswer, error) {
	return tools.PlanAnswer{Approved: true}, nil
}
func (a answerAll) RequestDirectory(_ context.Context, _ string, d tools.DirRequest) (tools.DirAnswer, error) {
	return tools.DirAnswer{Granted: true, Path: d.Path, Writable: d.Writable}, nil
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
}

func TestDefaultEngineRegistersTheBuiltinTools(t *testing.T) {
	e, err := backend.NewEngine(backend.EngineOptions{Workspace: t.TempDir(), Model: "m", Provider: scripted.New(), Lang: "en"})
	require.NoError(t, err)
	defer e.Close()
	require.ElementsMatch(t, builtinTools, e.Registry().Names())

	src := terminaltools.NewMemorySource(1 << 16)
	e2, err := backend.NewEngine(backend.EngineOptions{Workspace: t.TempDir(), Model: "m", Provider: scripted.New(), Terminals: src, ProjectID: "p1"})
	require.NoError(t, err)
	defer e2.Close()
	require.ElementsMatch(t, append(slices.Clone(builtinTools), "terminal_list", "terminal_read"), e2.Registry().Names())
	require.Contains(t, e2.SystemPrompt(), "zqagent", "the default prompt is the seed's (zh by default)")
}

func TestEveryToolEndToEnd(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# demo\nhello world\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "diff.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "img.png"), []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("outside notes"), 0o644))
	gitInit(t, ws)

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			_ = json.NewEncoder(w).Encode(map[string]any{"results": []any{map[string]any{"title": "Go", "url": "https://go.dev", "content": "The Go language"}}})
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Fetched page</h1><p>Some <b>text</b>.</p></body></html>")
	}))
	defer site.Close()

	src := terminaltools.NewMemorySource(1 << 16)
	require.NoError(t, src.Add("p1", tools.TerminalInfo{ID: "term1", Name: "dev", Cwd: ws, Alive: true}))
	require.NoError(t, src.Write("term1", []byte("\x1b[32mbuild ok\x1b[0m\r\n")))

	call := func(name, args string) func([]llm.Message) scripted.Response {
		return func([]llm.Message) scripted.Response {
			return scripted.Response{ToolCalls: []llm.ToolCall{{ID: "call_" + name, Name: name, Arguments: args}}}
		}
	}
	taskID := func(h []llm.Message) string {
		for i := len(h) - 1; i >= 0; i-- {
			var r struct {
				TaskID string `json:"task_id"`
			}
			if h[i].Role == llm.RoleTool && json.Unmarshal([]byte(h[i].Content), &r) == nil && r.TaskID != "" {
				return r.TaskID
			}
		}
		return "missing"
	}
	steps := []func([]llm.Message) scripted.Response{
		call("read_file", `{"path":"README.md"}`),
		call("list_files", `{}`),
		call("write_file", `{"path":"new.txt","content":"hello\n"}`),
		call("replace_in_file", `{"path":"new.txt","old_string":"hello","new_string":"hi"}`),
		call("run_shell", `{"command":"sleep 30","background":true}`),
		func(h []llm.Message) scripted.Response {
			return call("shell_task_output", fmt.Sprintf(`{"task_id":%q}`, taskID(h)))(h)
		},
		func(h []llm.Message) scripted.Response {
			return call("shell_task_kill", fmt.Sprintf(`{"task_id":%q}`, taskID(h)))(h)
		},
		call("grep", `{"pattern":"hello"}`),
		call("web_search", `{"query":"golang"}`),
		call("web_fetch", fmt.Sprintf(`{"url":%q}`, site.URL+"/page")),
		call("git_log", `{}`),
		call("git_status", `{}`),
		call("git_diff", `{}`),
		call("apply_patch", `{"patch":"*** Begin Patch\n*** Update File: diff.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch"}`),
		call("apply_unified_diff", `{"diff":"--- a/diff.txt\n+++ b/diff.txt\n@@ -1,3 +1,3 @@\n-one\n+ONE\n TWO\n three\n"}`),
		call("ask_user", `{"question":"color?","options":["red","blue"]}`),
		call("propose_plan", `{"plan":"1. read\n2. write"}`),
		call("request_directory", fmt.Sprintf(`{"path":%q,"reason":"read the notes"}`, outside)),
		call("todo_write", `{"todos":[{"id":"1","content":"ship it","status":"in_progress"}]}`),
		call("explore", `{"task":"what is in the workspace?"}`),
		call("media", `{"path":"img.png"}`),
		call("terminal_list", `{}`),
		call("terminal_read", `{"terminal_id":"term1"}`),
		call("read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(outside, "notes.txt"))),
	}
	p := &stepProvider{steps: steps, inner: scripted.New()}
	e, wired, err := backend.NewEngineWired(backend.EngineOptions{
		Workspace: ws, Model: "m", Provider: p, Lang: "en", SessionDir: t.TempDir(),
		Terminals: src, ProjectID: "p1",
		Web: web.Options{AllowPrivate: true, Search: &web.SearXNG{BaseURL: site.URL}},
	})
	require.NoError(t, err)
	defer e.Close()
	e.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeOnce, nil
	})
	e.SetInteractor(answerAll{})

	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "use every tool"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	seen := map[string]protocol.ToolStatus{}
	for _, f := range find[protocol.ToolFinishedData](evs) {
		seen[f.Name] = f.Status
		require.Equal(t, protocol.ToolOK, f.Status, "%s: %s", f.Name, f.ResultPreview)
	}
	for _, name := range append(slices.Clone(builtinTools), "terminal_list", "terminal_read") {
		require.Contains(t, seen, name, "tool %s never ran", name)
	}
	b, err := os.ReadFile(filepath.Join(ws, "diff.txt"))
	require.NoError(t, err)
	require.Equal(t, "ONE\nTWO\nthree\n", string(b))
	b, err = os.ReadFile(filepath.Join(ws, "new.txt"))
	require.NoError(t, err)
	require.Equal(t, "hi\n", string(b))
	require.Len(t, wired.Todos.Items(), 1)
	require.Contains(t, last(evs).ProducedFiles, "new.txt")
	// The media attachment rode along to the model; the explore report came back.
	var sawImage, sawReport, sawTerminal bool
	for _, m := range e.Messages() {
		for _, a := range m.Attachments {
			sawImage = sawImage || a.MimeType == "image/png"
		}
		sawReport = sawReport || strings.Contains(m.Content, "explore report")
		sawTerminal = sawTerminal || (m.Name == "terminal_read" && strings.Contains(m.Content, "build ok") && !strings.Contains(m.Content, "\x1b"))
	}
	require.True(t, sawImage, "media attachment")
	require.True(t, sawReport, "explore report")
	require.True(t, sawTerminal, "terminal output without escapes")
	require.Len(t, find[protocol.PermissionRequiredData](evs), 9, "write, exec, network and patch tools asked")
}

// TestNewDefaultSpilledResultReadable: with TOOL_RESULT_DIR set (relative,
// too), an over-budget result is spilled there and read_file on the path the
// model was given works.
func TestNewDefaultSpilledResultReadable(t *testing.T) {
	ws := t.TempDir()
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("line %03d of a long file", i+1))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.txt"), []byte(strings.Join(lines, "\n")), 0o644))
	t.Chdir(t.TempDir())
	t.Setenv("TOOL_RESULT_DIR", "spill")
	t.Setenv("TOOL_RESULT_MAX_CHARS", "2000")
	saved := regexp.MustCompile(`saved to (\S+); read it with read_file`)
	path := ""
	steps := []func([]llm.Message) scripted.Response{
		func([]llm.Message) scripted.Response {
			return scripted.Response{ToolCalls: []llm.ToolCall{{ID: "big", Name: "read_file", Arguments: `{"path":"big.txt"}`}}}
		},
		func(h []llm.Message) scripted.Response {
			if m := saved.FindStringSubmatch(h[len(h)-1].Content); m != nil {
				path = m[1]
			}
			args, _ := json.Marshal(map[string]any{"path": path, "start_line": 2, "end_line": 3})
			return scripted.Response{ToolCalls: []llm.ToolCall{{ID: "back", Name: "read_file", Arguments: string(args)}}}
		},
	}
	e, err := backend.NewEngine(backend.EngineOptions{Workspace: ws, Model: "m", Provider: &stepProvider{steps: steps, inner: scripted.New()}, Lang: "en"})
	require.NoError(t, err)
	defer e.Close()
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "read big.txt"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	require.True(t, filepath.IsAbs(path), "the model is given an absolute path: %q", path)
	fin := find[protocol.ToolFinishedData](evs)
	require.Len(t, fin, 2)
	require.Equal(t, protocol.ToolOK, fin[1].Status, fin[1].ResultPreview)
	h := e.Messages()
	require.Contains(t, h[len(h)-2].Content, "line 002 of a long file")
}

// TestNewDefaultLanguageReachesEveryPrompt: EngineOptions.Lang selects the
// system prompt, the session-naming prompt and the compaction summary
// prompt the model receives.
func TestNewDefaultLanguageReachesEveryPrompt(t *testing.T) {
	for _, lang := range engine.PromptLangs {
		ws := t.TempDir()
		for _, f := range []string{"a.txt", "b.txt"} {
			require.NoError(t, os.WriteFile(filepath.Join(ws, f), []byte(strings.Repeat("some words of a file ", 400)), 0o644))
		}
		p := scripted.New(
			scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
			scripted.Response{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "read_file", Arguments: `{"path":"b.txt"}`}}},
			scripted.Response{Err: "maximum context length exceeded", ErrKind: "context_overflow"},
			scripted.Response{Text: "fits now"})
		p.AppendChat("summary of the reads", "A title")
		e, err := backend.NewEngine(backend.EngineOptions{Workspace: ws, Model: "m", Provider: p, Lang: lang, ContextWindow: 1_000_000})
		require.NoError(t, err)
		evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "read both"}}))
		require.Equal(t, protocol.TurnCompleted, last(evs).Status, lang)
		_, err = e.GenerateName(context.Background())
		require.NoError(t, err)
		require.NoError(t, e.Close())

		want := engine.Prompts(lang)
		require.True(t, strings.HasPrefix(p.Requests()[0].Messages[0].Content, want.Code), "%s: system prompt", lang)
		chats := p.ChatRequests()
		require.Len(t, chats, 2, lang)
		require.Equal(t, want.Summary, chats[0].Messages[0].Content, "%s: summary prompt", lang)
		require.Equal(t, want.Naming, chats[1].Messages[0].Content, "%s: naming prompt", lang)
	}
}

// EngineOptions.VCS is the seed's vcs option: off by default, and when on,
// every turn that changed the workspace is a snapshot.
func TestEngineOptionsVCS(t *testing.T) {
	e, wired, err := backend.NewEngineWired(backend.EngineOptions{Workspace: t.TempDir(), Model: "m", Provider: scripted.New(), Lang: "en"})
	require.NoError(t, err)
	require.Nil(t, wired.VCS, "off by default")
	require.NoError(t, e.Close())

	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := scripted.New(
		scripted.Response{ToolCalls: []llm.ToolCall{call("w1", "write_file", `{"path":"a.txt","content":"a\n"}`)}},
		scripted.Response{Text: "wrote"})
	e, wired, err = backend.NewEngineWired(backend.EngineOptions{
		Workspace: ws, Model: "m", Provider: p, Lang: "en", Mode: permission.ModeAuto,
		VCS: engine.VCSOptions{Config: vcs.Config{Mode: vcs.ModeShadow, ShadowRoot: t.TempDir()}, SessionID: "lib"},
	})
	require.NoError(t, err)
	defer e.Close()
	require.NotNil(t, wired.VCS)
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "write"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	_, err = os.Stat(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	turns, err := wired.VCS.ListTurns(context.Background())
	require.NoError(t, err)
	require.Len(t, turns, 1)
	require.Equal(t, "a.txt", turns[0].Files[0].Path)

	_, err = backend.NewEngine(backend.EngineOptions{Workspace: ws, Model: "m", Provider: scripted.New(), VCS: engine.VCSOptions{Config: vcs.Config{Mode: "sometimes"}}})
	require.ErrorIs(t, err, vcs.ErrInvalidMode)
}
