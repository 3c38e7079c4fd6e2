package scripted

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

// TestDemoWalksThroughTools plays the demo like the engine would: each tool
// call is answered with a tool message, and the next step follows.
func TestDemoWalksThroughTools(t *testing.T) {
	if Demo().react == nil {
		t.Fatal("Demo reacts to the conversation")
	}
	p := demo("en", 0) // the real pacing is 25ms a delta; tests skip it
	history := []llm.Message{{Role: llm.RoleUser, Content: "hello"}}
	step := func(wantTool string, result string) played {
		t.Helper()
		r := playAll(context.Background(), p, llm.Request{Model: "demo", Messages: history})
		require.Equal(t, nil, r.err)
		if r.deltas < 2 {
			t.Fatalf("the demo streams in small deltas, got %d", r.deltas)
		}
		history = append(history, llm.Message{Role: llm.RoleAssistant, Content: r.content, ToolCalls: r.final.ToolCalls})
		if wantTool == "" {
			require.Equal(t, 0, len(r.final.ToolCalls))
			require.Equal(t, "stop", r.final.FinishReason)
			return r
		}
		require.Equal(t, 1, len(r.final.ToolCalls))
		c := r.final.ToolCalls[0]
		require.Equal(t, wantTool, c.Name)
		history = append(history, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result})
		return r
	}
	r := step("list_files", `{"entries":[{"name":"go.mod"},{"name":"main.go"},{"name":"README.md"}]}`)
	if !strings.Contains(r.content, "scripted demo provider") {
		t.Fatalf("the demo says what it is: %q", r.content)
	}
	require.Equal(t, `{"path":"."}`, r.final.ToolCalls[0].Arguments)
	r = step("run_shell", `{"stdout":" M main.go\n?? notes.txt\n","exitCode":0}`)
	require.Equal(t, `{"command":"git status --short"}`, r.final.ToolCalls[0].Arguments)
	if !strings.Contains(r.content, "3 entries") {
		t.Fatalf("the demo reacts to the listing: %q", r.content)
	}
	r = step("ask_user", `{"answer":"Explain the project layout"}`)
	if !strings.Contains(r.final.ToolCalls[0].Arguments, `"options":[`) {
		t.Fatalf("ask_user offers options: %s", r.final.ToolCalls[0].Arguments)
	}
	r = step("", "")
	for _, want := range []string{"3 entries", "2 changed paths", "Explain the project layout"} {
		if !strings.Contains(r.content, want) {
			t.Errorf("summary lacks %q: %s", want, r.content)
		}
	}

	// Deterministic: the same history gives the same answer.
	a := playAll(context.Background(), demo("en", 0), llm.Request{Messages: history[:1]})
	b := playAll(context.Background(), demo("en", 0), llm.Request{Messages: history[:1]})
	require.Equal(t, a, b)
}

func TestDemoSummaryCopesWithErrorsAndText(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "list_files"}}},
		{Role: llm.RoleTool, ToolCallID: "a", Content: "go.mod\nmain.go\n"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "b", Name: "run_shell"}}},
		{Role: llm.RoleTool, ToolCallID: "b", Content: `{"error":"the user denied the command","error_type":"permission_denied"}`},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "ask_user"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: "Nothing for now"},
	}
	got := demoAnswer(msgs, demoTextOf("en")).Text
	for _, want := range []string{"2 entries", "did not run: the user denied the command", `"Nothing for now"`} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q: %s", want, got)
		}
	}
}

// A git status that failed (not a repository) is reported as a failure,
// not as its complaint counted for a changed path.
func TestDemoSummaryReportsAFailedGitStatus(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "b", Name: "run_shell"}}},
		{Role: llm.RoleTool, ToolCallID: "b", Content: `{"exit_code":128,"output":"fatal: not a git repository (or any of the parent directories): .git\n","duration_ms":3,"timed_out":false}`},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "ask_user"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: "Nothing for now"},
	}
	got := demoAnswer(msgs, demoTextOf("en")).Text
	require.Contains(t, got, "git status failed (exit code 128): fatal: not a git repository")
	require.NotContains(t, got, "changed path")

	msgs[2].Content = `{"exit_code":0,"output":" M a.go\n","duration_ms":3,"timed_out":false}`
	require.Contains(t, demoAnswer(msgs, demoTextOf("en")).Text, "git status lists 1 changed path")
}

// The demo speaks the session's language: every language has every text,
// with the format verbs the demo passes, and names sessions in it.
func TestDemoSpeaksEachLanguage(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "a", Name: "list_files"}}},
		{Role: llm.RoleTool, ToolCallID: "a", Content: "go.mod\nmain.go\n"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "b", Name: "run_shell"}}},
		{Role: llm.RoleTool, ToolCallID: "b", Content: `{"exit_code":0,"output":" M a.go\n"}`},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "ask_user"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: "ok"},
	}
	for _, lang := range []string{"zh", "en", "zh-TW", "ja", "ko", "es"} {
		tx, ok := demoTexts[lang]
		require.True(t, ok, lang)
		for _, r := range []Response{demoAnswer(msgs[:1], tx), demoAnswer(msgs[:3], tx), demoAnswer(msgs[:5], tx), demoAnswer(msgs, tx)} {
			require.NotEmpty(t, r.Text, lang)
			require.NotContains(t, r.Text, "%!", lang) // a format verb without its argument
		}
		name, err := DemoIn(lang).Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "name it"}, {Role: llm.RoleUser, Content: "fix the build"}}})
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf(tx.name, "Fix the build"), name.Text)
		require.True(t, DemoIn(lang).NamesSessions())
	}
	require.Contains(t, demoAnswer(msgs, demoTexts["ja"]).Text, "デモはここまでです")
	require.Contains(t, demoAnswer(msgs[:1], demoTexts["zh"]).Text, "演示提供方")
	require.False(t, New().NamesSessions(), "a script does not name sessions")
}
