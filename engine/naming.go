package engine

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

type (
	llmToolSchema = llm.ToolSchema
	llmFunction   = llm.FunctionSchema
)

// maxNameRunes caps a generated session name.
const maxNameRunes = 60

// Naming is a generated session title and the events of the request that
// made it, for the host to record (taskId ""): its usage, counted toward
// the session's totals, and the endpoint's rate limits.
type Naming struct {
	Name   string
	Events []Event
}

// GenerateName asks the model for a short session title from the first user
// message (the seed's genSessionNamePrompt, through the provider's Chat). It
// returns "" with no error when there is nothing to name yet.
func (e *Engine) GenerateName(ctx context.Context) (Naming, error) {
	first := ""
	for _, m := range e.Messages() {
		if m.Role == llm.RoleUser && m.Notice == "" && strings.TrimSpace(m.Content) != "" {
			first = m.Content
			break
		}
	}
	if first == "" {
		return Naming{}, nil
	}
	prompt := e.opts.GenSessionNamePrompt
	if prompt == "" {
		prompt = Prompts(e.opts.Lang).Naming
	}
	if utf8.RuneCountInString(first) > 2000 {
		first = string([]rune(first)[:2000])
	}
	model, reqID := e.Model(), newID("name_")
	resp, err := e.provider.Chat(ctx, llm.ChatRequest{
		Model:     model,
		Messages:  []llm.Message{{Role: llm.RoleSystem, Content: prompt}, {Role: llm.RoleUser, Content: first}},
		ReqID:     reqID,
		MaxTokens: 64,
	})
	var out Naming
	if resp.Usage != nil {
		out.Events = append(out.Events, Event{protocol.EventUsage, e.meter.add(protocol.UsageData{ReqID: reqID, Model: model, Source: protocol.UsageTitle}, *resp.Usage, nil)})
	}
	if resp.RateLimits != nil {
		out.Events = append(out.Events, Event{protocol.EventRateLimits, rateLimitsData("", reqID, model, resp.RateLimits)})
	}
	if err != nil {
		return out, err
	}
	out.Name = SanitizeSessionName(resp.Text)
	return out, nil
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
