package openai

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

// responsesStream writes a Responses API stream the way OpenAI does: reasoning
// summary, a text message and two parallel function calls whose arguments
// arrive in deltas. With withDone=false the *.done events of the calls are
// left out, so the arguments can only come from the deltas.
func responsesStream(withDone bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-5","output":[],"usage":null}}`)
		s.event(`{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":1700000000,"status":"in_progress","model":"gpt-5","output":[]}}`)
		s.event(`{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`)
		s.event(`{"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`)
		s.event(`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Planning**"}`)
		s.event(`{"type":"response.reasoning_summary_text.done","sequence_number":5,"item_id":"rs_1","output_index":0,"summary_index":0,"text":"**Planning**"}`)
		s.event(`{"type":"response.reasoning_summary_part.done","sequence_number":6,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"**Planning**"}}`)
		s.event(`{"type":"response.reasoning_summary_part.added","sequence_number":7,"item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`)
		s.event(`{"type":"response.reasoning_summary_text.delta","sequence_number":8,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Read both."}`)
		s.event(`{"type":"response.output_item.done","sequence_number":9,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Planning**"}]}}`)
		s.event(`{"type":"response.output_item.added","sequence_number":10,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`)
		s.event(`{"type":"response.content_part.added","sequence_number":11,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`)
		for i, d := range []string{"Let me", " look", "."} {
			s.event(`{"type":"response.output_text.delta","sequence_number":` + itoa(12+i) + `,"item_id":"msg_1","output_index":1,"content_index":0,"delta":` + quote(d) + `,"logprobs":[],"obfuscation":"xyz"}`)
		}
		s.event(`{"type":"response.output_text.done","sequence_number":15,"item_id":"msg_1","output_index":1,"content_index":0,"text":"Let me look.","logprobs":[]}`)
		s.event(`{"type":"response.content_part.done","sequence_number":16,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Let me look."}}`)
		s.event(`{"type":"response.output_item.done","sequence_number":17,"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Let me look."}],"role":"assistant"}}`)
		s.event(`{"type":"response.output_item.added","sequence_number":18,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_one","name":"read_file"}}`)
		s.event(`{"type":"response.output_item.added","sequence_number":19,"output_index":3,"item":{"id":"fc_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_two","name":"grep"}}`)
		s.event(`{"type":"response.function_call_arguments.delta","sequence_number":20,"item_id":"fc_1","output_index":2,"delta":"{\"path\":"}`)
		s.event(`{"type":"response.function_call_arguments.delta","sequence_number":21,"item_id":"fc_2","output_index":3,"delta":"{\"pattern\""}`)
		s.event(`{"type":"response.function_call_arguments.delta","sequence_number":22,"item_id":"fc_1","output_index":2,"delta":"\"a.go\"}"}`)
		s.event(`{"type":"response.function_call_arguments.delta","sequence_number":23,"item_id":"fc_2","output_index":3,"delta":":\"TODO\"}"}`)
		if withDone {
			s.event(`{"type":"response.function_call_arguments.done","sequence_number":24,"item_id":"fc_1","output_index":2,"arguments":"{\"path\":\"a.go\"}"}`)
			s.event(`{"type":"response.output_item.done","sequence_number":25,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"path\":\"a.go\"}","call_id":"call_one","name":"read_file"}}`)
			s.event(`{"type":"response.function_call_arguments.done","sequence_number":26,"item_id":"fc_2","output_index":3,"arguments":"{\"pattern\":\"TODO\"}"}`)
			s.event(`{"type":"response.output_item.done","sequence_number":27,"output_index":3,"item":{"id":"fc_2","type":"function_call","status":"completed","arguments":"{\"pattern\":\"TODO\"}","call_id":"call_two","name":"grep"}}`)
		}
		s.event(`{"type":"response.completed","sequence_number":28,"response":{"id":"resp_1","object":"response","created_at":1700000000,"status":"completed","model":"gpt-5","output":[],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":130}}}`)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestResponsesStream(t *testing.T) {
	for _, withDone := range []bool{true, false} {
		t.Run(map[bool]string{true: "with done events", false: "deltas only"}[withDone], func(t *testing.T) {
			f := newFakeAPI(t)
			f.handle("/v1/responses", responsesStream(withDone))
			p := f.provider(nil)
			req := userReq("gpt-5", "find todos")
			req.ReasoningEffort = "medium"
			r := collect(context.Background(), p, req)
			require.NoError(t, r.err)
			require.Equal(t, "Let me look.", r.content)
			require.Equal(t, "**Planning**\n\nRead both.", r.reasoning)
			require.Equal(t, "tool_calls", r.final.FinishReason)
			require.Equal(t, []llm.ToolCall{
				{ID: "call_one", Name: "read_file", Arguments: `{"path":"a.go"}`},
				{ID: "call_two", Name: "grep", Arguments: `{"pattern":"TODO"}`},
			}, r.final.ToolCalls)
			require.Equal(t, &llm.Usage{PromptTokens: 100, CompletionTokens: 30, TotalTokens: 130, ReasoningTokens: 12, CachedTokens: 40}, r.final.Usage)
			require.Equal(t, 0, f.count("/v1/chat/completions"))
			body := f.last("/v1/responses").Body
			require.Equal(t, true, body["stream"])
			require.Equal(t, map[string]any{"effort": "medium", "summary": "auto"}, body["reasoning"])
		})
	}
}

func TestResponsesWireInput(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/responses", responsesStream(true))
	p := f.provider(nil)
	req := llm.Request{Model: "gpt-5", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "sys"},
		{Role: llm.RoleUser, Content: "look", Attachments: []llm.Attachment{{Name: "a.png", MimeType: "image/png", DataURL: "data:image/png;base64,AAA="}}},
		{Role: llm.RoleAssistant, Content: "reading", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: "contents"},
	}, Tools: []llm.ToolSchema{{Type: "function", Function: llm.FunctionSchema{
		Name: "read_file", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}}}
	require.NoError(t, collect(context.Background(), p, req).err)
	body := f.last("/v1/responses").Body
	require.Equal(t, []any{
		map[string]any{"type": "message", "role": "system", "content": "sys"},
		map[string]any{"type": "message", "role": "user", "content": []any{
			map[string]any{"type": "input_text", "text": "look"},
			map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AAA="},
		}},
		map[string]any{"type": "message", "role": "assistant", "content": "reading"},
		map[string]any{"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": `{"path":"a"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "contents"},
	}, body["input"])
	require.Equal(t, []any{map[string]any{"type": "function", "name": "read_file", "description": "Read a file",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}}}, body["tools"])
	_, hasReasoning := body["reasoning"]
	require.True(t, !hasReasoning, "no reasoning block without an effort")
}

func TestResponsesErrorEvent(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/responses", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"gpt-5","output":[]}}`)
		s.event(`{"type":"response.failed","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":1,"status":"failed","model":"gpt-5","output":[],"error":{"code":"server_error","message":"The model failed."}}}`)
	})
	r := collect(context.Background(), f.provider(func(o *Options) { o.MaxRetries = 0 }), userReq("gpt-5", "hi"))
	require.Equal(t, llm.KindServer, llm.KindOf(r.err), r.err)
	require.True(t, hasText(r.err.Error(), "The model failed."), r.err)
	require.Equal(t, 0, f.count("/v1/chat/completions"), "an in-stream failure never falls back")
}
