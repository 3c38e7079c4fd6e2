package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/zqagent/sidecar/llm"
)

// Responses API input items the SDK has no type for.
type (
	inputFunctionCall struct {
		Type      string `json:"type"` // function_call
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	inputContentPart struct {
		Type     string `json:"type"` // input_text | input_image | input_file
		Text     string `json:"text,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
		FileData string `json:"file_data,omitempty"`
		Filename string `json:"filename,omitempty"`
	}
)

// webSearchTool is the local tool DeepSeek's server-side builtin replaces.
const webSearchTool = "web_search"

// responsesRequest translates a request to the Responses API.
func responsesRequest(req llm.Request, deepseek bool) goopenai.CreateResponseRequest {
	out := responsesRequestHead(req, deepseek)
	out.Input = responsesInput(req.Messages)
	return out
}

// responsesRequestHead is responsesRequest without the input.
func responsesRequestHead(req llm.Request, deepseek bool) goopenai.CreateResponseRequest {
	store := false
	out := goopenai.CreateResponseRequest{
		Model: req.Model,
		Store: &store,
	}
	for _, t := range req.Tools {
		if deepseek && t.Function.Name == webSearchTool {
			continue
		}
		out.Tools = append(out.Tools, goopenai.NewResponseFunctionTool(goopenai.FunctionDefinition{
			Name:        t.Function.Name,
			Description: t.Function.Description,
			Parameters:  schemaOf(t.Function.Parameters),
		}))
	}
	if deepseek {
		out.Tools = append(out.Tools, goopenai.ResponseTool{Type: goopenai.ToolTypeWebSearch})
	}
	if req.ReasoningEffort != "" && !deepseek {
		out.Reasoning = &goopenai.ResponseReasoning{Effort: req.ReasoningEffort, Summary: "auto"}
	}
	if req.MaxTokens > 0 {
		out.MaxOutputTokens = req.MaxTokens
	}
	return out
}

// responsesBody encodes a streamed Responses request, as chatBody does.
func (p *Provider) responsesBody(req llm.Request, deepseek bool) (wire goopenai.CreateResponseRequest, body []byte, err error) {
	head, frags, err := p.wire.encode(req.Conversation, ModeResponses, req, headKeyOf(req, deepseek),
		func() ([]byte, error) {
			h := responsesRequestHead(req, deepseek)
			h.Stream = true // as the SDK sets it
			h.Input = []any{}
			return json.Marshal(h)
		},
		func(int) bool { return false },
		func(m *llm.Message, _ bool) ([]byte, error) { return joinItems(responsesItems(*m)) })
	if err != nil {
		return goopenai.CreateResponseRequest{}, nil, err
	}
	body, ok := spliceBody(head, `{"input":[]`, frags)
	if !ok {
		full := responsesRequestHead(req, deepseek)
		full.Stream = true
		full.Input = responsesInput(req.Messages)
		return full, nil, nil
	}
	return goopenai.CreateResponseRequest{Model: req.Model}, body, nil
}

// responsesInput translates history to input items: messages, function_call
// items for the assistant's calls and function_call_output for tool results.
func responsesInput(msgs []llm.Message) []any {
	items := make([]any, 0, len(msgs))
	for _, m := range msgs {
		items = append(items, responsesItems(m)...)
	}
	return items
}

// responsesItems translates one message to its input items.
func responsesItems(m llm.Message) []any {
	switch m.Role {
	case llm.RoleUser:
		return []any{responsesUser(m)}
	case llm.RoleAssistant:
		var items []any
		if m.Content != "" {
			items = append(items, goopenai.ResponseInputMessage{Type: "message", Role: llm.RoleAssistant, Content: m.Content})
		}
		for _, c := range m.ToolCalls {
			items = append(items, inputFunctionCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: argsOrEmpty(c.Arguments)})
		}
		return items
	case llm.RoleTool:
		return []any{goopenai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: nonEmpty(m.Content)}}
	default:
		return []any{goopenai.ResponseInputMessage{Type: "message", Role: m.Role, Content: m.Content}}
	}
}

func responsesUser(m llm.Message) goopenai.ResponseInputMessage {
	if len(m.Attachments) == 0 {
		return goopenai.ResponseInputMessage{Type: "message", Role: llm.RoleUser, Content: m.Content}
	}
	parts := []inputContentPart{}
	if m.Content != "" {
		parts = append(parts, inputContentPart{Type: "input_text", Text: m.Content})
	}
	for _, a := range m.Attachments {
		inline := isImage(a) || a.MimeType == "application/pdf"
		url, err := "", error(nil)
		if inline {
			url, err = a.URL()
		}
		switch {
		case err != nil:
			parts = append(parts, inputContentPart{Type: "input_text", Text: unreadableNote(a, err)})
		case isImage(a):
			parts = append(parts, inputContentPart{Type: "input_image", ImageURL: url})
		case a.MimeType == "application/pdf":
			parts = append(parts, inputContentPart{Type: "input_file", FileData: url, Filename: a.Name})
		default:
			parts = append(parts, inputContentPart{Type: "input_text", Text: attachmentNote(a)})
		}
	}
	return goopenai.ResponseInputMessage{Type: "message", Role: llm.RoleUser, Content: parts}
}

// respCall is a function call being streamed by the Responses API.
type respCall struct {
	itemID string
	call   llm.ToolCall
}

// streamResponses runs one Responses API stream.
func streamResponses(ctx context.Context, c *goopenai.Client, wire goopenai.CreateResponseRequest, out *collector) error {
	stream, err := c.CreateResponseStream(ctx, wire)
	if err != nil {
		return err
	}
	defer stream.Close()
	var calls []respCall
	find := func(itemID string, outputIndex int) *respCall {
		for i := range calls {
			if calls[i].itemID == itemID && itemID != "" {
				return &calls[i]
			}
		}
		if itemID == "" && outputIndex >= 0 && outputIndex < len(calls) {
			return &calls[outputIndex]
		}
		return nil
	}
	upsert := func(it *goopenai.ResponseOutputItem, final bool) {
		rc := find(it.ID, -1)
		if rc == nil {
			calls = append(calls, respCall{itemID: it.ID})
			rc = &calls[len(calls)-1]
		}
		if it.CallID != "" {
			rc.call.ID = it.CallID
		}
		if it.Name != "" {
			rc.call.Name = it.Name
		}
		if it.Arguments != "" || !final {
			rc.call.Arguments = it.Arguments // done carries the complete arguments
		}
	}
	finish := ""
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch ev.Type {
		case goopenai.ResponseStreamEventOutputTextDelta, goopenai.ResponseStreamEventRefusalDelta:
			if ev.Delta != "" && !out.emit(llm.Chunk{Content: ev.Delta}) {
				return errStopped
			}
		case goopenai.ResponseStreamEventReasoningSummaryTextDelta, goopenai.ResponseStreamEventReasoningTextDelta:
			if ev.Delta != "" && !out.emit(llm.Chunk{Reasoning: ev.Delta}) {
				return errStopped
			}
		case goopenai.ResponseStreamEventReasoningSummaryPartAdded:
			// Separate summary parts by a blank line.
			if ev.SummaryIndex > 0 && !out.emit(llm.Chunk{Reasoning: "\n\n"}) {
				return errStopped
			}
		case goopenai.ResponseStreamEventOutputItemAdded, goopenai.ResponseStreamEventOutputItemDone:
			if ev.Item != nil && ev.Item.Type == "function_call" {
				upsert(ev.Item, ev.Type == goopenai.ResponseStreamEventOutputItemDone)
			}
		case goopenai.ResponseStreamEventFunctionArgumentsDelta:
			if rc := find(ev.ItemID, ev.OutputIndex); rc != nil {
				rc.call.Arguments += ev.Delta
			}
		case goopenai.ResponseStreamEventFunctionArgumentsDone:
			if rc := find(ev.ItemID, ev.OutputIndex); rc != nil && ev.Arguments != "" {
				rc.call.Arguments = ev.Arguments
			}
		case goopenai.ResponseStreamEventCompleted, goopenai.ResponseStreamEventIncomplete:
			finish = "stop"
			if r := ev.Response; r != nil {
				if r.Usage != nil {
					out.usage = usageOfResponse(r.Usage)
				}
				if r.IncompleteDetails != nil {
					finish = incompleteReason(r.IncompleteDetails.Reason)
				} else if ev.Type == goopenai.ResponseStreamEventIncomplete {
					finish = "length"
				}
			}
		case goopenai.ResponseStreamEventFailed:
			f := apiFailure{message: "response failed"}
			if ev.Response != nil && ev.Response.Error != nil {
				f.code, f.message = ev.Response.Error.Code, ev.Response.Error.Message
			}
			return &streamError{f: f}
		case goopenai.ResponseStreamEventError:
			f := apiFailure{code: ev.Code, message: ev.Message}
			if ev.Error != nil {
				f.code, f.message = ev.Error.Code, ev.Error.Message
			}
			if f.message == "" {
				f.message = string(ev.Raw)
			}
			return &streamError{f: f}
		}
	}
	var acc []llm.ToolCall
	for i, rc := range calls {
		if rc.call.Name == "" {
			continue
		}
		if rc.call.ID == "" {
			rc.call.ID = rc.itemID
		}
		if rc.call.ID == "" {
			rc.call.ID = fmt.Sprintf("call_%d", i)
		}
		acc = append(acc, rc.call)
	}
	out.calls = acc
	if err := endedEmpty(out, finish); err != nil {
		return err
	}
	out.finish = finish
	if len(acc) > 0 && (finish == "" || finish == "stop") {
		out.finish = "tool_calls"
	}
	return nil
}

func incompleteReason(r string) string {
	switch r {
	case "max_output_tokens":
		return "length"
	case "content_filter":
		return "content_filter"
	case "":
		return "length"
	}
	return r
}

func usageOfResponse(u *goopenai.ResponseUsage) *llm.Usage {
	out := &llm.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if u.OutputTokensDetails != nil {
		out.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
	}
	if u.InputTokensDetails != nil {
		out.CachedTokens = u.InputTokensDetails.CachedTokens
	}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out
}

// schemaOf returns a tool's JSON schema for the wire; an empty schema becomes
// an object without properties, which every API accepts.
func schemaOf(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return raw
}
