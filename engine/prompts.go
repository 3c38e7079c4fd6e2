package engine

import (
	"embed"
	"fmt"
	"runtime"
	"strings"
)

// The default prompts are embedded text files, one per language, split into
// sections by "=== name" lines (engine/prompts/<lang>.txt).
//
//go:embed prompts/*.txt
var promptFS embed.FS

// PromptLangs are the languages of the default prompts (seed PROMPT_LANGS).
var PromptLangs = []string{"zh", "en", "zh-TW", "ja", "ko", "es"}

// PromptSet is the prompts of one language.
type PromptSet struct {
	Code          string // system prompt of the "code" agent type
	Cowork        string // system prompt of the "cowork" agent type
	Env           string // environment block template ({{workspace}}, {{today}}, {{os}})
	Naming        string // session-naming prompt
	Summary       string // compaction summary prompt
	MaxIterations string // notice for the final tool-less turn
	Explore       string // explore subagent's system prompt
	DemoNotice    string // initialize's notice when the demo answers (no API key)
	// Messages are the texts for people (errtext.go), by section name:
	// "error.<key>" (error events), "reason.<reason>" (turn_end reasons)
	// and "kind.<kind>" (JSON-RPC error kinds).
	Messages map[string]string
}

var promptSets = loadPrompts()

func loadPrompts() map[string]PromptSet {
	out := map[string]PromptSet{}
	for _, lang := range PromptLangs {
		b, err := promptFS.ReadFile("prompts/" + lang + ".txt")
		if err != nil {
			panic(fmt.Sprintf("embedded prompts for %s: %v", lang, err))
		}
		sec := parseSections(string(b))
		out[lang] = PromptSet{
			Code: sec["code"], Cowork: sec["cowork"], Env: sec["env"], Naming: sec["naming"],
			Summary: sec["summary"], MaxIterations: sec["max_iterations"], Explore: sec["explore"],
			DemoNotice: sec["demo_notice"], Messages: messageSections(sec),
		}
	}
	return out
}

func parseSections(s string) map[string]string {
	out := map[string]string{}
	name := ""
	var buf strings.Builder
	flush := func() {
		if name != "" {
			out[name] = strings.TrimSpace(buf.String())
		}
		buf.Reset()
	}
	for line := range strings.SplitSeq(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "=== "); ok {
			flush()
			name = strings.TrimSpace(rest)
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	flush()
	return out
}

// NormalizeLang maps a language tag to one of PromptLangs: zh when empty
// (the seed's default), English for a language without prompts.
func NormalizeLang(lang string) string {
	if strings.TrimSpace(lang) == "" {
		return "zh"
	}
	if l, ok := MatchLang(lang); ok {
		return l
	}
	return "en"
}

// MatchLang maps a language tag — BCP 47 ("zh-Hant-TW", "ja-JP") or POSIX
// ("ko_KR.UTF-8", "es_ES@euro") — to the one of PromptLangs it names, and
// reports false for a language without prompts (or no language: "", "C",
// "POSIX"). Traditional Chinese (zh-Hant, zh-TW, zh-HK, zh-MO) is zh-TW; any
// other Chinese is zh.
func MatchLang(tag string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(t, ".@"); i >= 0 { // POSIX codeset and modifier
		t = t[:i]
	}
	parts := strings.FieldsFunc(t, func(r rune) bool { return r == '-' || r == '_' })
	if len(parts) == 0 {
		return "", false
	}
	switch parts[0] {
	case "zh":
		for _, p := range parts[1:] {
			switch p {
			case "hant", "tw", "hk", "mo":
				return "zh-TW", true
			}
		}
		return "zh", true
	case "en", "ja", "ko", "es":
		return parts[0], true
	}
	return "", false
}

// Prompts returns the prompt set of a language.
func Prompts(lang string) PromptSet { return promptSets[NormalizeLang(lang)] }

func prompts(lang string) PromptSet { return Prompts(lang) }

// BuildEnvBlock renders the environment block.
func BuildEnvBlock(workspace, today, lang string) string {
	r := strings.NewReplacer("{{workspace}}", workspace, "{{today}}", today, "{{os}}", runtime.GOOS+"/"+runtime.GOARCH)
	return r.Replace(Prompts(lang).Env)
}

// BuildInstructions is the seed's buildInstructions: the system prompt of an
// agent type ("code" or "cowork") followed by the environment block.
func BuildInstructions(agentType, workspace, today, lang string) string {
	p := Prompts(lang)
	body := p.Code
	if agentType == "cowork" {
		body = p.Cowork
	}
	return body + "\n\n" + BuildEnvBlock(workspace, today, lang)
}
