package engine_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
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

func TestMatchLang(t *testing.T) {
	for tag, want := range map[string]string{
		"zh": "zh", "zh-CN": "zh", "zh-Hans-CN": "zh", "zh_CN.UTF-8": "zh", "zh-SG": "zh",
		"zh-TW": "zh-TW", "zh_TW.Big5": "zh-TW", "zh-Hant": "zh-TW", "zh-Hant-TW": "zh-TW", "zh-HK": "zh-TW", "zh_MO": "zh-TW",
		"en": "en", "en-US": "en", "en_GB.UTF-8": "en", "EN": "en",
		"ja": "ja", "ja-JP": "ja", "ja_JP.eucJP": "ja",
		"ko": "ko", "ko-KR": "ko", "ko_KR.UTF-8": "ko",
		"es": "es", "es-419": "es", "es_ES@euro": "es", " es-MX ": "es",
	} {
		got, ok := engine.MatchLang(tag)
		require.True(t, ok, tag)
		require.Equal(t, want, got, tag)
	}
	for _, tag := range []string{"", "C", "POSIX", "C.UTF-8", "fr-FR", "de", "eng", "english", "-", "zhx", "enx-US"} {
		_, ok := engine.MatchLang(tag)
		require.False(t, ok, tag)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files")

// TestInstructionsGolden pins the built system prompt of both agent types
// in all six languages (engine/testdata/instructions/<agent>.<lang>.golden;
// go test ./engine -run Golden -update rewrites them). The OS line is
// written as GOOS/GOARCH so the files are the same on every platform.
func TestInstructionsGolden(t *testing.T) {
	for _, agent := range []string{"code", "cowork"} {
		for _, lang := range engine.PromptLangs {
			got := engine.BuildInstructions(agent, "/ws/demo", "2026-11-30", lang)
			got = strings.ReplaceAll(got, runtime.GOOS+"/"+runtime.GOARCH, "GOOS/GOARCH")
			path := filepath.Join("testdata", "instructions", agent+"."+lang+".golden")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				continue
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./engine -run Golden -update")
			require.Equal(t, string(want), got, "%s %s", agent, lang)
		}
	}
	// Each language's prompts are its own: no two languages share a prompt.
	seen := map[string]string{}
	for _, lang := range engine.PromptLangs {
		p := engine.Prompts(lang)
		for _, text := range []string{p.Code, p.Cowork, p.Naming, p.Summary} {
			require.NotContains(t, seen, text, "%s repeats %s's prompt", lang, seen[text])
			seen[text] = lang
		}
	}
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
