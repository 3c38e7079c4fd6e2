package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
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
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)

	perms := find[protocol.PermissionRequiredData](evs)
	require.Len(t, perms, 2)
	require.Equal(t, []protocol.TextWarning{{Field: "arguments.x", Kind: protocol.WarnBidi}}, perms[0].Warnings)
	require.Equal(t, `ls \u202e; rm -rf ~ \u202c# safe`, perms[0].Display["arguments.x"])
	require.Empty(t, perms[1].Warnings)
	require.Nil(t, perms[1].Display)

	q := find[protocol.AskUserQuestionData](evs)
	require.Len(t, q, 1)
	require.Equal(t, []protocol.TextWarning{{Field: "question", Kind: protocol.WarnANSI}, {Field: "options[1]", Kind: protocol.WarnInvisible}}, q[0].Warnings)
	require.Equal(t, map[string]string{"question": `\x1b[2Jcontinue?`, "options[1]": `no\u200b`}, q[0].Display)

	p := find[protocol.PlanProposedData](evs)
	require.Len(t, p, 2)
	require.Equal(t, []protocol.TextWarning{{Field: "plan", Kind: protocol.WarnControl}}, p[0].Warnings)
	require.Equal(t, "1. read\n2. \\x0ddone\tok", p[0].Display["plan"], "tabs and newlines stay, \\r is escaped")
	require.Empty(t, p[1].Warnings, "emoji sequences and ZWNJ in Persian are not flagged: %q", p[1].Plan)

	d := find[protocol.DirectoryRequestedData](evs)
	require.Len(t, d, 1)
	require.Equal(t, []protocol.TextWarning{{Field: "path", Kind: protocol.WarnBidi}}, d[0].Warnings)
	require.True(t, strings.HasSuffix(d[0].Display["path"], `docs\u2066`), d[0].Display["path"])

	// On the wire: omitted when clean, present when not.
	b, err := json.Marshal(perms[1])
	require.NoError(t, err)
	require.NotContains(t, string(b), "warnings")
	b, err = json.Marshal(perms[0])
	require.NoError(t, err)
	require.Contains(t, string(b), `"warnings":[{"field":"arguments.x","kind":"bidi"}]`)
}

// TestCardsFlagBlanks: every space separator but U+0020, and the
// characters that look blank (Hangul fillers, Braille blank), is escaped in
// a card's display form; so are the default-ignorable characters; ASCII
// spaces, tabs, newlines, ZWNJ, ZWJ and Hangul text are not.
func TestCardsFlagBlanks(t *testing.T) {
	var blanks []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Zs, r) && r != ' ' {
			blanks = append(blanks, r)
		}
	}
	require.Len(t, blanks, 16, "U+00A0, U+1680, U+2000–200A, U+202F, U+205F, U+3000")
	blanks = append(blanks, 0x115f, 0x1160, 0x3164, 0xffa0, 0x2800, 0x1d159)
	invisible := []rune{0x17b4, 0x17b5, 0x206a, 0x206f, 0xfff9, 0xfffb, 0x1bca0, 0x1d173, 0x2065, 0xe0001}
	for _, r := range append(blanks, invisible...) {
		s := "a" + string(r) + "b"
		got := engine.DisplayText(s)
		require.NotContains(t, got, string(r), "U+%04X", r)
		require.Regexp(t, `^a\\(x|u|U)[0-9a-f]+b$`, got, "U+%04X", r)
	}
	for _, s := range []string{"echo ok # comment\tx\n", "\ud55c\uae00 \ud14d\uc2a4\ud2b8", "\U0001f468\u200d\U0001f469 \u2764\ufe0f", `a\b`} {
		require.Equal(t, s, engine.DisplayText(s), "%q", s)
	}
	persian := "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
	require.Equal(t, persian, engine.DisplayProse(persian), "ZWNJ in Persian prose")
	require.Equal(t, `ok\xa0#\u3164 \\`, engine.DisplayText("ok\u00a0#\u3164 \\"), "backslashes doubled once a text is escaped")
}

// TestCardsFlagJoiners: a ZWNJ or ZWJ is flagged where it shows as nothing
// and can hide something: in a command, path or argument unless it joins
// emoji; in prose unless it joins emoji or letters of a script that uses
// it (Persian, Indic).
func TestCardsFlagJoiners(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"rm -rf foo\u200cbar", `rm -rf foo\u200cbar`},
		{"cat /etc/pass\u200dwd", `cat /etc/pass\u200dwd`},
		{"\u200decho", `\u200decho`},
		{"echo\u200c", `echo\u200c`},
		{"\u0645\u06cc\u200c\u062e", "\u0645\u06cc\\u200c\u062e"},                                    // Persian in a path is flagged
		{"a \U0001f468\u200d x", "a \U0001f468\\u200d x"},                                            // a ZWJ after an emoji, before a space
		{"\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f468\u200d\U0001f469\u200d\U0001f467"}, // family
		{"\U0001f3f3\ufe0f\u200d\U0001f308", "\U0001f3f3\ufe0f\u200d\U0001f308"},                     // rainbow flag
		{"\U0001f469\U0001f3fd\u200d\U0001f4bb", "\U0001f469\U0001f3fd\u200d\U0001f4bb"},             // skin tone, then ZWJ
		{"\U0001f468\u200c\U0001f469", "\U0001f468\\u200c\U0001f469"},                                // ZWNJ never joins emoji
	} {
		require.Equal(t, c.out, engine.DisplayText(c.in), "%q", c.in)
	}
	for _, c := range []struct{ in, out string }{
		{"delete foo\u200cbar?", `delete foo\u200cbar?`},
		{"\u043f\u0440\u0438\u200d\u0432\u0435\u0442", "\u043f\u0440\u0438\\u200d\u0432\u0435\u0442"}, // Cyrillic
		{"ok \u200d", `ok \u200d`},
		{"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"}, // Persian
		{"\u0915\u094d\u200d\u0937", "\u0915\u094d\u200d\u0937"},                                                 // Devanagari half form
		{"\U0001f468\u200d\U0001f469", "\U0001f468\u200d\U0001f469"},
	} {
		require.Equal(t, c.out, engine.DisplayProse(c.in), "%q", c.in)
	}
	require.Equal(t, []string{`a\\b`, `a\\b\u200c`}, engine.DisplayTexts(`a\b`, "a\\b\u200c"), "both escaped when one is")
	require.Equal(t, []string{`a\b`, "\U0001f468\u200d\U0001f469"}, engine.DisplayTexts(`a\b`, "\U0001f468\u200d\U0001f469"))

	// On the events: an argument and a command are checked strictly, a
	// question as prose.
	args, _ := json.Marshal(map[string]any{"x": "rm -rf build\u200c/"})
	question, _ := json.Marshal(map[string]any{"question": "remove build\u200d?", "options": []string{"\u0645\u06cc\u200c\u062e", "\U0001f468\u200d\U0001f469"}})
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "danger", string(args))}},
		scripted.Response{ToolCalls: []llm.ToolCall{call("q1", "ask_user", string(question))}},
		scripted.Response{Text: "ok"})
	interact.RegisterAskTool(r.reg, r.eng.Interactor())
	r.eng.SetInteractor(&fakeHandlers{})
	r.eng.SetApprover(func(context.Context, permission.Request) (permission.Outcome, error) {
		return permission.OutcomeDeny, nil
	})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	perms := find[protocol.PermissionRequiredData](evs)
	require.Len(t, perms, 1)
	require.Equal(t, []protocol.TextWarning{{Field: "arguments.x", Kind: protocol.WarnInvisible}}, perms[0].Warnings)
	require.Equal(t, `rm -rf build\u200c/`, perms[0].Display["arguments.x"])
	q := find[protocol.AskUserQuestionData](evs)
	require.Len(t, q, 1)
	require.Equal(t, []protocol.TextWarning{{Field: "question", Kind: protocol.WarnInvisible}}, q[0].Warnings)
	require.Equal(t, map[string]string{"question": `remove build\u200d?`}, q[0].Display)
}
