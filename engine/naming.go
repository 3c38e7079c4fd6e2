package engine

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/zqagent/sidecar/llm"
)

type (
	llmToolSchema = llm.ToolSchema
	llmFunction   = llm.FunctionSchema
)

// maxNameRunes caps a generated session name.
const maxNameRunes = 60

// GenerateName asks the model for a short session title from the first user
// message (the seed's genSessionNamePrompt, through the provider's Chat). It
// returns "" with no error when there is nothing to name yet.
func (e *Engine) GenerateName(ctx context.Context) (string, error) {
	first := ""
	for _, m := range e.Messages() {
		if m.Role == llm.RoleUser && m.Notice == "" && strings.TrimSpace(m.Content) != "" {
			first = m.Content
			break
		}
	}
	if first == "" {
		return "", nil
	}
	prompt := e.opts.GenSessionNamePrompt
	if prompt == "" {
		prompt = Prompts(e.opts.Lang).Naming
	}
	if utf8.RuneCountInString(first) > 2000 {
		first = string([]rune(first)[:2000])
	}
	text, err := e.provider.Chat(ctx, llm.ChatRequest{
		Model:     e.Model(),
		Messages:  []llm.Message{{Role: llm.RoleSystem, Content: prompt}, {Role: llm.RoleUser, Content: first}},
		ReqID:     newID("name_"),
		MaxTokens: 64,
	})
	if err != nil {
		return "", err
	}
	return SanitizeSessionName(text), nil
}

// SanitizeSessionName keeps the first non-empty line, without quotes, markup
// or trailing punctuation, capped in length.
func SanitizeSessionName(s string) string {
	line := ""
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	line = strings.TrimLeft(line, "#*-> ")
	line = strings.Trim(line, "\"'`“”‘’「」『』*")
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "Title:"), "标题："))
	line = strings.TrimRight(line, ".。!！?？,，;；:：")
	if utf8.RuneCountInString(line) > maxNameRunes {
		line = string([]rune(line)[:maxNameRunes])
	}
	return strings.TrimSpace(line)
}
