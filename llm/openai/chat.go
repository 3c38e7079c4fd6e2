package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	goopenai "github.com/sashabaranov/go-openai"

	"github.com/zqagent/sidecar/llm"
)

// chatRequest translates a request to Chat Completions.
func chatRequest(req llm.Request, deepseek bool) goopenai.ChatCompletionRequest {
	out := chatRequestHead(req, deepseek)
	out.Messages = chatMessages(req.Messages, deepseek)
	return out
}

// chatRequestHead is chatRequest without the messages.
func chatRequestHead(req llm.Request, deepseek bool) goopenai.ChatCompletionRequest {
	out := goopenai.ChatCompletionRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, goopenai.Tool{
			Type: goopenai.ToolTypeFunction,
			Function: &goopenai.FunctionDefinition{
				Name:        t.Function.Name,
				Description: t.Function.Description,
				Parameters:  schemaOf(t.Function.Parameters),
			},
		})
	}
	if req.ReasoningEffort != "" && !deepseek {
		out.ReasoningEffort = req.ReasoningEffort
	}
	setMaxTokens(&out, req.MaxTokens, deepseek)
	return out
}

// chatBody encodes a streamed Chat Completions request (see wire.go): the
// body of the whole request, and the request the SDK is handed in its
// place. Without a body (the SDK's encoding changed shape), wire is the
// whole request and the SDK encodes it.
func (p *Provider) chatBody(req llm.Request, deepseek bool) (wire goopenai.ChatCompletionRequest, body []byte, err error) {
	full := chatRequestHead(req, deepseek)
	if err := goopenai.NewReasoningValidator().Validate(full); err != nil {
		return full, nil, err // what the SDK would say of the whole request
	}
	alt := chatReasoning(req.Messages, deepseek)
	head, frags, err := p.wire.encode(req.Conversation, ModeChat, req, headKeyOf(req, deepseek),
		func() ([]byte, error) {
			h := full
			h.Messages = []goopenai.ChatCompletionMessage{}
			return json.Marshal(h)
		},
		alt,
		func(m *llm.Message, alt bool) ([]byte, error) {
			cm, ok := chatMessage(*m, alt)
			if !ok {
				return nil, nil
			}
			return json.Marshal(cm)
		})
	if err != nil {
		return full, nil, err
	}
	model, _ := json.Marshal(req.Model)
	body, ok := spliceBody(head, `{"model":`+string(model)+`,"messages":[]`, frags)
	if !ok {
		full.Messages = chatMessages(req.Messages, deepseek)
		return full, nil, nil
	}
	return goopenai.ChatCompletionRequest{Model: req.Model}, body, nil
}

func setMaxTokens(r *goopenai.ChatCompletionRequest, n int, deepseek bool) {
	if n <= 0 {
		return
	}
	if deepseek {
		//lint:ignore SA1019 DeepSeek takes max_tokens, not max_completion_tokens.
		r.MaxTokens = n
	} else {
		r.MaxCompletionTokens = n
	}
}

// chatMessages translates history. For DeepSeek the reasoning of assistant
// tool-call messages of the current turn (after the last user message) is
// sent back, as its thinking mode requires inside a tool loop; older
// reasoning is dropped.
func chatMessages(msgs []llm.Message, deepseek bool) []goopenai.ChatCompletionMessage {
	alt := chatReasoning(msgs, deepseek)
	out := make([]goopenai.ChatCompletionMessage, 0, len(msgs))
	for i, m := range msgs {
		if cm, ok := chatMessage(m, alt(i)); ok {
			out = append(out, cm)
		}
	}
	return out
}

// chatReasoning reports, for each message of a history, whether its
// reasoning is sent back (chatMessages).
func chatReasoning(msgs []llm.Message, deepseek bool) func(i int) bool {
	lastUser := -1
	for i, m := range msgs {
		if m.Role == llm.RoleUser {
			lastUser = i
		}
	}
	return func(i int) bool {
		return deepseek && i > lastUser && msgs[i].Role == llm.RoleAssistant && len(msgs[i].ToolCalls) > 0
	}
}

// chatMessage translates one message; ok is false for one that is not sent.
func chatMessage(m llm.Message, withReasoning bool) (_ goopenai.ChatCompletionMessage, ok bool) {
	switch m.Role {
	case llm.RoleUser:
		return chatUser(m), true
	case llm.RoleAssistant:
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return goopenai.ChatCompletionMessage{}, false // an interrupted answer with nothing in it; APIs refuse empty assistant messages
		}
		am := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: m.Content}
		for _, c := range m.ToolCalls {
			am.ToolCalls = append(am.ToolCalls, goopenai.ToolCall{
				ID:       c.ID,
				Type:     goopenai.ToolTypeFunction,
				Function: goopenai.FunctionCall{Name: c.Name, Arguments: argsOrEmpty(c.Arguments)},
			})
		}
		if withReasoning {
			am.ReasoningContent = m.Reasoning
		}
		return am, true
	case llm.RoleTool:
		return goopenai.ChatCompletionMessage{
			Role: goopenai.ChatMessageRoleTool, Content: nonEmpty(m.Content), ToolCallID: m.ToolCallID,
		}, true
	default:
		return goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content}, true
	}
}

func chatUser(m llm.Message) goopenai.ChatCompletionMessage {
	if len(m.Attachments) == 0 {
		return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: m.Content}
	}
	parts := []goopenai.ChatMessagePart{}
	if m.Content != "" {
		parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: m.Content})
	}
	for _, a := range m.Attachments {
		if isImage(a) {
			url, err := a.URL()
			if err != nil {
				parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: unreadableNote(a, err)})
				continue
			}
			parts = append(parts, goopenai.ChatMessagePart{
				Type:     goopenai.ChatMessagePartTypeImageURL,
				ImageURL: &goopenai.ChatMessageImageURL{URL: url},
			})
			continue
		}
		parts = append(parts, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: attachmentNote(a)})
	}
	return goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, MultiContent: parts}
}

func isImage(a llm.Attachment) bool {
	return strings.HasPrefix(a.MimeType, "image/") || strings.HasPrefix(a.DataURL, "data:image/")
}

// unreadableNote stands for an attachment whose stored file could not be
// read (deleted from the session folder meanwhile): the model is told,
// the turn goes on.
func unreadableNote(a llm.Attachment, err error) string {
	return "[attachment " + a.Name + " (" + a.MimeType + ") could not be read: " + err.Error() + "]"
}

func attachmentNote(a llm.Attachment) string {
	return "[attachment " + a.Name + " (" + a.MimeType + ") cannot be shown to this model]"
}

func argsOrEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

func nonEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

// streamChat runs one Chat Completions stream, emitting deltas and finally a
// chunk with tool calls, usage and finish reason.
func streamChat(ctx context.Context, c *goopenai.Client, wire goopenai.ChatCompletionRequest, out *collector) error {
	stream, err := c.CreateChatCompletionStream(ctx, wire)
	if err != nil {
		return err
	}
	defer stream.Close()
	var calls callAssembler
	var finish string
	for {
		// The SDK reads the SSE stream and its errors (RecvRaw); each
		// chunk is decoded here (decodeChunk).
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var resp chatStreamChunk
		if err := decodeChunk(raw, &resp); err != nil {
			return err
		}
		if resp.Usage != nil {
			out.usage = usageOfChat(resp.Usage)
		}
		for _, ch := range resp.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			for _, tc := range d.ToolCalls {
				idx := -1
				if tc.Index != nil {
					idx = *tc.Index
				}
				calls.add(callDelta{Index: idx, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
			if d.ReasoningContent != "" || d.Content != "" {
				if !out.emit(llm.Chunk{Content: d.Content, Reasoning: d.ReasoningContent}) {
					return errStopped
				}
			}
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
	}
	out.calls = calls.result()
	if err := endedEmpty(out, finish); err != nil {
		return err
	}
	out.finish = finish
	if len(out.calls) > 0 && (finish == "" || finish == "stop") {
		out.finish = "tool_calls"
	}
	return nil
}

// chatStreamChunk is the part of a Chat Completions stream chunk the
// provider reads (the SDK's ChatCompletionStreamResponse, its field types
// and JSON names, without the fields nothing reads).
type chatStreamChunk struct {
	Choices []chatStreamChoice `json:"choices"`
	Usage   *chatUsage         `json:"usage"`
}

// chatUsage is a Chat Completions usage: OpenAI's shape (cached input in
// prompt_tokens_details, reasoning in completion_tokens_details), and
// DeepSeek's prompt_cache_hit_tokens where an endpoint reports the cached
// part only so.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
}

// chatUsageOf is the SDK's usage (a non-streamed answer) as a chatUsage.
func chatUsageOf(u goopenai.Usage) *chatUsage {
	out := &chatUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.PromptTokensDetails = &struct {
			CachedTokens int `json:"cached_tokens"`
		}{d.CachedTokens}
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{d.ReasoningTokens}
	}
	return out
}

type chatStreamChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content          string              `json:"content"`
		ReasoningContent string              `json:"reasoning_content"`
		ToolCalls        []goopenai.ToolCall `json:"tool_calls"`
	} `json:"delta"`
	FinishReason goopenai.FinishReason `json:"finish_reason"`
}

// chunkOptions make encoding/json/v2 read a chunk as encoding/json does
// (v1's semantics: names matched without regard to case, duplicate names
// allowed, invalid UTF-8 read as U+FFFD, ...), as GOEXPERIMENT=jsonv2
// builds encoding/json itself.
var chunkOptions = jsonv1.DefaultOptionsV1()

// decodeChunk decodes one stream chunk with encoding/json/v2
// (github.com/go-json-experiment/json, its mirror until Go 1.27): the
// SDK's encoding/json decoding of every chunk was the largest part of a
// stream's CPU; v2 reads a chunk in half the time with a fifth of the
// allocations (BenchmarkChatStream).
func decodeChunk(raw []byte, v *chatStreamChunk) error {
	return jsonv2.Unmarshal(raw, v, chunkOptions)
}

// endedEmpty reports a stream that ended before carrying anything (no delta,
// no call, no finish reason): a dropped connection, which may be retried.
func endedEmpty(out *collector, finish string) error {
	if !out.emitted && finish == "" && len(out.calls) == 0 && out.usage == nil {
		return fmt.Errorf("%w: the stream ended before any data", io.ErrUnexpectedEOF)
	}
	return nil
}

func usageOfChat(u *chatUsage) *llm.Usage {
	out := &llm.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if out.CachedTokens == 0 {
		out.CachedTokens = u.PromptCacheHitTokens
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}
