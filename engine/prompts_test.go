package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
)

func TestPromptsEveryLanguageHasEverySection(t *testing.T) {
	for _, lang := range engine.PromptLangs {
		p := engine.Prompts(lang)
		for name, text := range map[string]string{"code": p.Code, "cowork": p.Cowork, "env": p.Env, "naming": p.Naming, "summary": p.Summary, "max_iterations": p.MaxIterations, "explore": p.Explore} {
			require.NotEmpty(t, strings.TrimSpace(text), "%s: section %s", lang, name)
		}
		ins := engine.BuildInstructions("cowork", "/ws/demo", "2026-11-30", lang)
		require.Contains(t, ins, "/ws/demo", lang)
		require.Contains(t, ins, "2026-11-30", lang)
		require.NotContains(t, ins, "{{", "%s: unrendered placeholder", lang)
		require.NotEqual(t, engine.BuildInstructions("code", "/ws", "d", lang), engine.BuildInstructions("cowork", "/ws", "d", lang))
	}
	require.Equal(t, "zh-TW", engine.NormalizeLang("zh_TW"))
	require.Equal(t, "zh", engine.NormalizeLang(""), "the seed's default language")
	require.Equal(t, "ja", engine.NormalizeLang("ja-JP"))
	require.Equal(t, "en", engine.NormalizeLang("fr"))
}

func TestSanitizeSessionName(t *testing.T) {
	cases := map[string]string{
		"\"Fix the parser\"":           "Fix the parser",
		"Title: Refactor login.\nmore": "Refactor login",
		"# 修复解析器。":                     "修复解析器",
		"  \n\n  **Add tests**  ":      "Add tests",
		strings.Repeat("word ", 40):    strings.TrimSpace(strings.Repeat("word ", 12)),
	}
	for in, want := range cases {
		require.Equal(t, want, engine.SanitizeSessionName(in), "%q", in)
	}
}
