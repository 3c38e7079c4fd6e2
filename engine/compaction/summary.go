package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

var errNothingToSummarise = errors.New("nothing old enough to summarise")

// maxTranscriptShare bounds the summariser's input to this share of the
// window, so the summary call itself never overflows.
const maxTranscriptShare = 0.6

// toolResultCap bounds each tool result in the transcript.
const toolResultCap = 4000

// plan splits msgs for a summary: which indexes stay verbatim and which go
// into the summary.
type plan struct {
	keepHead  []int // system prompt, first request (in order)
	turnUsers []int // user messages of the current turn older than the boundary
	boundary  int   // msgs[boundary:] stay verbatim
	summarise []int
	kept      int // user messages kept verbatim
	dropped   int // user messages folded into the summary
}

func makePlan(msgs []llm.Message, est *Estimator, keepPct float64) (plan, error) {
	var p plan
	first := -1
	for i, m := range msgs {
		if m.Role == llm.RoleSystem && i == 0 {
			p.keepHead = append(p.keepHead, i)
			continue
		}
		if m.Role == llm.RoleUser && m.Notice == "" {
			first = i
			p.keepHead = append(p.keepHead, i)
			break
		}
	}
	p.boundary = protectedFrom(msgs, est, keepPct)
	if p.boundary <= first+1 {
		return p, errNothingToSummarise
	}
	cur := currentTurnStart(msgs)
	head := map[int]bool{}
	for _, i := range p.keepHead {
		head[i] = true
	}
	for i := 0; i < p.boundary; i++ {
		m := msgs[i]
		switch {
		case head[i]:
		case i >= cur && m.Role == llm.RoleUser:
			p.turnUsers = append(p.turnUsers, i)
		case m.Role == llm.RoleSystem:
			p.keepHead = append(p.keepHead, i) // a later system note is kept
		default:
			p.summarise = append(p.summarise, i)
		}
	}
	if len(p.summarise) == 0 {
		return p, errNothingToSummarise
	}
	for i, m := range msgs {
		if m.Role != llm.RoleUser || m.Notice != "" {
			continue
		}
		if i >= p.boundary || head[i] || contains(p.turnUsers, i) {
			p.kept++
		} else {
			p.dropped++
		}
	}
	return p, nil
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Transcript renders messages for the summariser.
func Transcript(msgs []llm.Message, idx []int, maxTokens int, est *Estimator) string {
	calls := callIndex(msgs)
	var b strings.Builder
	for _, i := range idx {
		m := msgs[i]
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(&b, "[user] %s\n\n", m.Content)
		case llm.RoleAssistant:
			if m.Content != "" {
				fmt.Fprintf(&b, "[assistant] %s\n", m.Content)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[assistant calls] %s\n", describeCall(c, ""))
			}
			b.WriteString("\n")
		case llm.RoleTool:
			content := m.Content
			if len(content) > toolResultCap {
				content = content[:runeStart(content, toolResultCap)] + "\n…(truncated)"
			}
			fmt.Fprintf(&b, "[result of %s]\n%s\n\n", describeCall(calls[m.ToolCallID], m.Name), content)
		default:
			fmt.Fprintf(&b, "[%s] %s\n\n", m.Role, m.Content)
		}
	}
	s := b.String()
	// Keep the start and the end when the transcript is still too long.
	if maxTokens > 0 && est.Text(s) > maxTokens {
		keep := maxTokens * 3 // bytes, a conservative ~3 bytes per token
		if keep < len(s) {
			h := runeStart(s, keep/3)
			t := runeStart(s, len(s)-keep*2/3)
			s = s[:h] + "\n…(middle of the conversation omitted)…\n" + s[t:]
		}
	}
	return s
}

// SummaryRequest builds the summariser's request (exported for golden tests).
func SummaryRequest(cfg Config, model string, transcript string) llm.ChatRequest {
	return llm.ChatRequest{
		Model:           model,
		ReasoningEffort: cfg.SummaryEffort,
		MaxTokens:       cfg.SummaryMaxTokens,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: cfg.SummaryPrompt},
			{Role: llm.RoleUser, Content: "<conversation>\n" + transcript + "</conversation>"},
		},
	}
}

// summaryMessage wraps the summary for the history.
func summaryMessage(summary string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Notice: NoticeSummary, Content: "<summary of the earlier conversation>\n" + strings.TrimSpace(summary) + "\n</summary>"}
}

// summarise replaces the older conversation by a model-written summary.
func (m *Manager) summarise(ctx context.Context, req Request, msgs []llm.Message, est *Estimator, obs Observer) ([]llm.Message, Done, error) {
	p, err := makePlan(msgs, est, m.cfg.KeepRecentPct)
	if err != nil {
		return nil, Done{}, err
	}
	if m.cfg.Provider == nil {
		return nil, Done{}, ErrNoProvider
	}
	model := m.cfg.SummaryModel
	if model == "" {
		model = req.Model
	}
	window, _, _ := m.Thresholds(model)
	transcript := Transcript(msgs, p.summarise, int(float64(window)*maxTranscriptShare), est)
	creq := SummaryRequest(m.cfg, model, transcript)
	creq.ReqID = "compact_" + req.TaskID
	if obs.Request != nil && !obs.Request(creq) {
		return nil, Done{}, context.Canceled
	}
	resp, err := m.cfg.Provider.Chat(ctx, creq)
	if obs.Response != nil && (err == nil || resp.RateLimits != nil) {
		obs.Response(creq, resp)
	}
	if err != nil {
		return nil, Done{}, fmt.Errorf("summary request: %w", err)
	}
	summary := resp.Text
	if strings.TrimSpace(summary) == "" {
		return nil, Done{}, errors.New("summary request: the model returned an empty summary")
	}
	if n := est.Text(summary); n > m.cfg.SummaryMaxTokens {
		// A runaway summary is cut to its token budget.
		summary = summary[:runeStart(summary, len(summary)*m.cfg.SummaryMaxTokens/n)]
	}
	out := make([]llm.Message, 0, len(p.keepHead)+1+len(p.turnUsers)+len(msgs)-p.boundary)
	for _, i := range p.keepHead {
		out = append(out, msgs[i])
	}
	out = append(out, summaryMessage(summary))
	for _, i := range p.turnUsers {
		out = append(out, msgs[i])
	}
	boundary := len(out)
	out = append(out, msgs[p.boundary:]...)
	kept, dropped := p.kept, p.dropped
	preview := summary
	if len(preview) > 300 {
		preview = preview[:runeStart(preview, 300)] + "…"
	}
	return out, Done{Method: "summarized", BoundaryIndex: &boundary, Model: model, SummaryPreview: preview, KeptUserMessages: &kept, DroppedUserMessages: &dropped}, nil
}
