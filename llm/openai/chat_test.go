package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

func TestChatStreamTextReasoningUsage(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.data(chatChunk(`{"role":"assistant","content":null,"reasoning_content":""}`, ""))
		s.data(chatChunk(`{"reasoning_content":"Let me "}`, ""))
		s.data(chatChunk(`{"reasoning_content":"think."}`, ""))
		s.data(chatChunk(`{"content":"Hi "}`, ""))
		s.data(chatChunk(`{"content":"there"}`, ""))
		s.data(chatChunk(`{}`, "stop"))
		s.data(chatUsageChunk)
		s.data("[DONE]")
	})
	p := f.provider(func(o *Options) { o.APIMode = ModeChat })
	req := userReq("gpt-4o", "hello")
	req.ReasoningEffort = "high"
	req.MaxTokens = 500
	r := collect(context.Background(), p, req)
	require.NoError(t, r.err)
	require.Equal(t, "Hi there", r.content)
	require.Equal(t, "Let me think.", r.reasoning)
	require.Equal(t, "stop", r.final.FinishReason)
	require.Equal(t, &llm.Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19, ReasoningTokens: 3, CachedTokens: 4}, r.final.Usage)
	require.Equal(t, 0, f.count("/v1/responses"), "forced chat mode never tries the Responses API")

	body := f.last("/v1/chat/completions").Body
	require.Equal(t, true, body["stream"])
	require.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
	require.Equal(t, "high", body["reasoning_effort"])
	require.Equal(t, 500.0, body["max_completion_tokens"])
	msgs := body["messages"].([]any)
	require.Equal(t, 2, len(msgs))
	require.Equal(t, map[string]any{"role": "system", "content": "You are a test."}, msgs[0])
}

func TestChatParallelToolCallsSplitOverDeltas(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.data(chatChunk(`{"role":"assistant","content":null}`, ""))
		s.data(chatChunk(`{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"read_file","arguments":""}}]}`, ""))
		s.data(chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}`, ""))
		s.data(chatChunk(`{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"grep","arguments":"{\"pat"}}]}`, ""))
		s.data(chatChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.go\"}"}}]}`, ""))
		s.data(chatChunk(`{"tool_calls":[{"index":1,"function":{"arguments":"tern\":"}}]}`, ""))
		s.data(chatChunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"TODO\"}"}}]}`, ""))
		s.data(chatChunk(`{}`, "tool_calls"))
		s.data(chatUsageChunk)
		s.data("[DONE]")
	})
	p := f.provider(func(o *Options) { o.APIMode = ModeChat })
	r := collect(context.Background(), p, userReq("gpt-4o", "look"))
	require.NoError(t, r.err)
	require.Equal(t, "tool_calls", r.final.FinishReason)
	require.Equal(t, []llm.ToolCall{
		{ID: "call_A", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{ID: "call_B", Name: "grep", Arguments: `{"pattern":"TODO"}`},
	}, r.final.ToolCalls)
	for _, ch := range r.chunks[:len(r.chunks)-1] {
		require.True(t, len(ch.ToolCalls) == 0, "tool calls arrive complete on the final chunk only")
	}
}

func TestChatWireHistory(t *testing.T) {
	msgs := []llm.Message{
		{Role: llm.RoleSystem, Content: "sys"},
		{Role: llm.RoleUser, Content: "old question"},
		{Role: llm.RoleAssistant, Content: "old answer", Reasoning: "old thoughts"},
		{Role: llm.RoleUser, Content: "see this", Attachments: []llm.Attachment{
			{Name: "shot.png", MimeType: "image/png", DataURL: "data:image/png;base64,iVBORw0KGgo="},
			{Name: "notes.bin", MimeType: "application/octet-stream", DataURL: "data:application/octet-stream;base64,AAAA"},
		}},
		{Role: llm.RoleAssistant, Reasoning: "plan", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"x"}`}, {ID: "c2", Name: "list_files"}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "file body"},
		{Role: llm.RoleTool, ToolCallID: "c2", Name: "list_files", Content: ""},
	}
	toJSON := func(deepseek bool) []map[string]any {
		b, err := json.Marshal(chatMessages(msgs, deepseek))
		require.NoError(t, err)
		var out []map[string]any
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	got := toJSON(false)
	require.Equal(t, 7, len(got))
	require.Equal(t, map[string]any{"role": "assistant", "content": "old answer"}, got[2])
	require.Equal(t, []any{
		map[string]any{"type": "text", "text": "see this"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}},
		map[string]any{"type": "text", "text": "[attachment notes.bin (application/octet-stream) cannot be shown to this model]"},
	}, got[3]["content"])
	require.Equal(t, []any{
		map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"x"}`}},
		map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "list_files", "arguments": `{}`}},
	}, got[4]["tool_calls"])
	_, has := got[4]["reasoning_content"]
	require.True(t, !has, "no reasoning_content for OpenAI")
	require.Equal(t, map[string]any{"role": "tool", "content": "file body", "tool_call_id": "c1"}, got[5])
	require.Equal(t, "(empty)", got[6]["content"])

	ds := toJSON(true)
	require.Equal(t, "plan", ds[4]["reasoning_content"], "DeepSeek gets the reasoning of the current tool loop back")
	_, has = ds[2]["reasoning_content"]
	require.True(t, !has, "older reasoning is dropped")
}

func TestChatNonStreamed(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, 200, `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Fix login bug"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
	})
	p := f.provider(nil)
	text, err := p.Chat(context.Background(), llm.ChatRequest{Model: "gpt-4o-mini", MaxTokens: 20, Messages: []llm.Message{{Role: llm.RoleUser, Content: "name this"}}})
	require.NoError(t, err)
	require.Equal(t, "Fix login bug", text.Text)
	require.Equal(t, &llm.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8}, text.Usage)
	body := f.last("/v1/chat/completions").Body
	require.True(t, body["stream"] != true, "Chat is not streamed")
	require.Equal(t, 20.0, body["max_completion_tokens"])
}

func TestModels(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, 200, `{"object":"list","data":[{"id":"gpt-4o","object":"model","created":1,"owned_by":"openai"},{"id":"deepseek-chat","object":"model","created":1,"owned_by":"x"},{"id":"gpt-4o","object":"model"}]}`)
	})
	ids, err := f.provider(nil).Models(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"deepseek-chat", "gpt-4o"}, ids)
	require.Equal(t, "Bearer "+testKey, f.last("/v1/models").Header.Get("Authorization"))
}

func TestEmptyAssistantMessagesAreDropped(t *testing.T) {
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}, {Role: llm.RoleAssistant}, {Role: llm.RoleUser, Content: "again"}}
	require.Equal(t, 2, len(chatMessages(msgs, false)))
	require.Equal(t, 2, len(responsesInput(msgs)))
}

// Chat (session names, summaries) uses the API the streamed requests use: a
// Responses-only endpoint answers it, and an auto-mode provider that fell
// back to chat for a model keeps using chat for it.
func TestChatUsesTheStreamAPI(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/responses", func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, 200, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Fix login bug","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}}`)
	})
	for _, mode := range []string{ModeResponses, ModeAuto} {
		p := f.provider(func(o *Options) { o.APIMode = mode })
		text, err := p.Chat(context.Background(), llm.ChatRequest{Model: "gpt-5", MaxTokens: 20, Messages: []llm.Message{{Role: llm.RoleSystem, Content: "name it"}, {Role: llm.RoleUser, Content: "name this"}}})
		require.NoError(t, err, mode)
		require.Equal(t, "Fix login bug", text.Text, mode)
		require.Equal(t, &llm.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8}, text.Usage, mode)
		body := f.last("/v1/responses").Body
		require.True(t, body["stream"] != true, "Chat is not streamed")
		require.Equal(t, 20.0, body["max_output_tokens"])
		require.Nil(t, body["tools"])
	}
	require.Equal(t, 0, f.count("/v1/chat/completions"))

	// A chat-only endpoint: the first call falls back and remembers it.
	g := newFakeAPI(t)
	g.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, 200, `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"A title"},"finish_reason":"stop"}]}`)
	})
	p := g.provider(nil)
	for range 2 {
		text, err := p.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		require.NoError(t, err)
		require.Equal(t, "A title", text.Text)
		require.Nil(t, text.Usage, "the endpoint sent no usage")
	}
	require.Equal(t, 1, g.count("/v1/responses"))
	require.True(t, p.UsesChat("m"))
}
