package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
)

func selected(id sdk.PermissionOptionId) sdk.RequestPermissionOutcome {
	return sdk.NewRequestPermissionOutcomeSelected(id)
}

// TestPermissionOptions: which options each request offers, and what each
// answer means (outcomes ↔ options).
func TestPermissionOptions(t *testing.T) {
	write := protocol.PermissionRequiredData{Name: "write_file"}
	git := protocol.PermissionRequiredData{Name: "run_shell", Command: "git"}
	pipeline := protocol.PermissionRequiredData{Name: "run_shell"} // too complex to grant
	all := []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways}
	noAlways := []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways}
	tests := []struct {
		name    string
		req     protocol.PermissionRequiredData
		kinds   []sdk.PermissionOptionKind
		answer  sdk.RequestPermissionOutcome
		outcome permission.Outcome
	}{
		{"tool: allow once", write, all, selected(optAllowOnce), permission.OutcomeOnce},
		{"tool: allow always grants the tool", write, all, selected(optAllowAlways), permission.OutcomeAlwaysTool},
		{"tool: reject once", write, all, selected(optRejectOnce), permission.OutcomeDeny},
		{"tool: reject always refuses this call", write, all, selected(optRejectAlways), permission.OutcomeDeny},
		{"tool: cancelled fails closed", write, all, sdk.NewRequestPermissionOutcomeCancelled(), permission.OutcomeDeny},
		{"tool: an unknown option fails closed", write, all, selected("yes_please"), permission.OutcomeDeny},
		{"command: allow always grants the executable", git, all, selected(optAllowAlways), permission.OutcomeAlwaysCommand},
		{"command: allow once", git, all, selected(optAllowOnce), permission.OutcomeOnce},
		{"complex command: no always option", pipeline, noAlways, selected(optAllowOnce), permission.OutcomeOnce},
		{"complex command: a forged allow_always fails closed", pipeline, noAlways, selected(optAllowAlways), permission.OutcomeDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kinds []sdk.PermissionOptionKind
			for _, o := range permissionOptions(tt.req) {
				kinds = append(kinds, o.Kind)
			}
			require.Equal(t, tt.kinds, kinds)
			require.Equal(t, tt.outcome, approvalOutcome(tt.req, tt.answer))
		})
	}
	require.Equal(t, "Always allow `git` in this session", permissionOptions(git)[1].Name)
}

func TestYesNoAndQuestions(t *testing.T) {
	require.True(t, allowed(selected(optAllowOnce)))
	require.False(t, allowed(selected(optRejectOnce)))
	require.False(t, allowed(sdk.NewRequestPermissionOutcomeCancelled()))

	q := protocol.AskUserQuestionData{Question: "Which?", Options: []string{"red", "blue"}}
	opts := questionOptions(q)
	require.Len(t, opts, 3)
	require.Equal(t, "blue", opts[1].Name)
	require.Equal(t, "blue", questionAnswer(q, selected(opts[1].OptionId)))
	require.Equal(t, noAnswer, questionAnswer(q, selected(optRejectOnce)))
	require.Equal(t, noAnswer, questionAnswer(q, selected("answer_7")))
	require.Equal(t, noAnswer, questionAnswer(q, sdk.NewRequestPermissionOutcomeCancelled()))
}

// TestFlaggedRequests: a request whose card the engine flagged has a ⚠
// title with the characters escaped, and a first content block naming each
// field and what it holds; option names are escaped too; a clean request
// has neither.
func TestFlaggedRequests(t *testing.T) {
	d := protocol.PermissionRequiredData{ReqID: "c1", Name: "write_file",
		Arguments: map[string]any{"path": "a\u202e.txt", "content": "x\u3164y"},
		Warnings: []protocol.TextWarning{
			{Field: "arguments.content", Kind: protocol.WarnBlank},
			{Field: "arguments.path", Kind: protocol.WarnBidi}, {Field: "arguments.path", Kind: protocol.WarnInvisible},
		}}
	u := newTranslator(t.TempDir()).callUpdate(d)
	require.Equal(t, `⚠ Write a\u202e.txt`, *u.Title)
	require.Equal(t, "⚠ `arguments.content` holds blanks that are not spaces to a shell (shown escaped).\n"+
		"⚠ `arguments.path` holds bidi overrides that reorder how text shows and invisible characters (shown escaped).",
		u.Content[0].Content.Content.Text.Text)
	require.Equal(t, "⚠ the diff's path and text hold characters a card flags (shown escaped).", u.Content[1].Content.Content.Text.Text)
	require.NotNil(t, u.Content[2].Diff, "the diff follows")
	require.True(t, strings.HasSuffix(u.Content[2].Diff.Path, `a\u202e.txt`), "the diff's path is escaped: %q", u.Content[2].Diff.Path)
	require.Equal(t, `x\u3164y`, u.Content[2].Diff.NewText)

	d.Warnings = nil
	d.Arguments = map[string]any{"path": "a.txt", "content": "x"}
	u = newTranslator(t.TempDir()).callUpdate(d)
	require.Equal(t, "Write a.txt", *u.Title)
	require.Len(t, u.Content, 1)
	require.NotNil(t, u.Content[0].Diff)

	opts := questionOptions(protocol.AskUserQuestionData{Options: []string{"yes\u00a0#\u00a0no", "two\nlines"}})
	require.Equal(t, `yes\xa0#\xa0no`, opts[0].Name)
	require.Equal(t, "two … (2 lines)", opts[1].Name)
	perm := permissionOptions(protocol.PermissionRequiredData{Name: "run_shell", Command: "l\u2800s"})
	require.Equal(t, "Always allow `l\\u2800s` in this session", perm[1].Name)
}

func TestModeState(t *testing.T) {
	st := modeState("")
	require.Equal(t, sdk.SessionModeId("interactive"), st.CurrentModeId)
	var ids []sdk.SessionModeId
	for _, m := range st.AvailableModes {
		ids = append(ids, m.Id)
		_, err := permission.ParseMode(string(m.Id))
		require.NoError(t, err)
	}
	require.Equal(t, []sdk.SessionModeId{"discuss", "plan", "interactive", "auto"}, ids)
	require.Equal(t, sdk.SessionModeId("plan"), modeState("plan").CurrentModeId)
}

func TestPromptInput(t *testing.T) {
	text, atts, err := promptInput([]sdk.ContentBlock{
		sdk.TextBlock("look at"),
		sdk.ResourceLinkBlock("main.go", "file:///p/main.go"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///p/a.txt", Text: "hello"}}),
		sdk.ImageBlock("aGk=", "image/png"),
	})
	require.NoError(t, err)
	require.Equal(t, "look at\n@file:///p/main.go\n<file uri=\"file:///p/a.txt\">\nhello\n</file>", text)
	require.Len(t, atts, 1)
	require.Equal(t, "data:image/png;base64,aGk=", atts[0].DataURL)
	require.Equal(t, "image/png", atts[0].MimeType)

	_, _, err = promptInput([]sdk.ContentBlock{sdk.TextBlock("  ")})
	require.ErrorIs(t, err, ErrBadPrompt)
}

func TestNumberLines(t *testing.T) {
	require.Equal(t, "     3\tc\n     4\td\n", numberLines("f", "c\nd\ne\n", 3, 2))
	require.Equal(t, "     1\ta\n", numberLines("f", "a\r\n", 1, 10))
	require.Equal(t, "[f is empty]", numberLines("f", "", 1, 10))
}
