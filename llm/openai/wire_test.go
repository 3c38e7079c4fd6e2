package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// wireHistory is a history with every kind of message the translation
// treats differently, and text json.Marshal escapes.
func wireHistory() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a test. <b>&amp;</b> \u2028 \"quoted\""},
		{Role: llm.RoleUser, Content: "hello \x00 \xff invalid utf-8", Notice: "steer"},
		{Role: llm.RoleAssistant, Content: ""}, // interrupted, sends nothing
		{Role: llm.RoleAssistant, Content: "let me look", Reasoning: "think <first>",
			ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "c2", Name: "ls", Arguments: " "}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "package a\n"},
		{Role: llm.RoleTool, ToolCallID: "c2", Name: "ls", Content: ""},
		{Role: llm.RoleUser, Content: "see", Attachments: []llm.Attachment{
			{Name: "shot.png", MimeType: "image/png", DataURL: "data:image/png;base64,AAAA"},
			{Name: "doc.pdf", MimeType: "application/pdf", DataURL: "data:application/pdf;base64,BBBB"},
			{Name: "x.bin", MimeType: "application/octet-stream", DataURL: "data:application/octet-stream;base64,CC"},
		}},
		{Role: llm.RoleAssistant, Content: "", Reasoning: "now <this>",
			ToolCalls: []llm.ToolCall{{ID: "c3", Name: "grep", Arguments: `{"q":"</script>"}`}}},
		{Role: llm.RoleTool, ToolCallID: "c3", Name: "grep", Content: "a.go:1:&"},
	}
}

func wireRequest(model string, msgs []llm.Message) llm.Request {
	return llm.Request{
		Model: model, Messages: msgs, ReqID: "r1", Conversation: "conv-1", ReasoningEffort: "low", MaxTokens: 100,
		Tools: []llm.ToolSchema{
			{Type: "function", Function: llm.FunctionSchema{Name: "read_file", Description: "Read <a> file & more",
				Parameters: json.RawMessage(`{ "type": "object", "properties": { "messages": [], "input": [] } }`)}},
			{Type: "function", Function: llm.FunctionSchema{Name: "web_search", Description: "search"}},
		},
	}
}

// The prebuilt body is exactly what json.Marshal gives for the whole
// request, the SDK's encoding, on both APIs, with and without DeepSeek's
// reasoning, on the first request of a conversation and on the next ones
// (cached messages, one changed in place, one appended, a shorter history).
func TestPrebuiltBodyIsTheSDKEncoding(t *testing.T) {
	for _, model := range []string{"gpt-4o", "deepseek-reasoner", `we"ird</model>`} {
		p := New(Options{BaseURL: "http://127.0.0.1:1/v1", APIKey: func(context.Context) (string, error) { return testKey, nil }})
		deepseek := p.isDeepSeek(model)
		h := wireHistory()
		check := func(step string, req llm.Request) {
			t.Helper()
			wire, body, err := p.chatBody(req, deepseek)
			require.NoError(t, err)
			require.NotNil(t, body, "%s %s: the fast path is taken", model, step)
			require.Equal(t, model, wire.Model)
			require.Nil(t, wire.Messages, "the SDK is handed no messages")
			want, err := json.Marshal(chatRequest(req, deepseek))
			require.NoError(t, err)
			require.Equal(t, string(want), string(body), "%s %s: chat", model, step)

			rwire, rbody, err := p.responsesBody(req, deepseek)
			require.NoError(t, err)
			require.NotNil(t, rbody)
			require.Nil(t, rwire.Input)
			full := responsesRequest(req, deepseek)
			full.Stream = true
			want, err = json.Marshal(full)
			require.NoError(t, err)
			require.Equal(t, string(want), string(rbody), "%s %s: responses", model, step)
		}
		check("first", wireRequest(model, h))
		check("again", wireRequest(model, h))
		h[4].Content = "package b\n" // a tool result elided in place
		h[3].ToolCalls[0].Arguments = `{"path":"b.go"}`
		check("changed", wireRequest(model, h))
		h = append(h, llm.Message{Role: llm.RoleUser, Content: "next"}) // the reasoning above is now an older turn's
		check("appended", wireRequest(model, h))
		check("compacted", wireRequest(model, h[4:]))
		req := wireRequest(model, h)
		req.Tools = req.Tools[1:]
		check("fewer tools", req)
		req.Tools = wireRequest(model, h).Tools
		req.Tools[0].Function.Parameters = json.RawMessage(`{"type":"object"}`)
		check("changed tool", req)
		req.ReasoningEffort, req.MaxTokens = "", 0
		check("other options", req)
		check("no conversation", llm.Request{Model: model, Messages: h})
		check("empty", llm.Request{Model: model, Conversation: "conv-1"})
	}
}

// A conversation's next request encodes only the messages that changed,
// and its head only when the tools or options changed.
func TestWireCacheEncodesOnlyChangedMessages(t *testing.T) {
	var c wireCache
	n, heads := 0, 0
	enc := func(m *llm.Message, alt bool) ([]byte, error) {
		n++
		return json.Marshal(m.Content + strconv.FormatBool(alt))
	}
	head := func() ([]byte, error) { heads++; return []byte(`{"messages":[]}`), nil }
	no := func(int) bool { return false }
	tools := []llm.ToolSchema{{Type: "function", Function: llm.FunctionSchema{Name: "x", Parameters: json.RawMessage(`{}`)}}}
	req := llm.Request{Model: "m", Tools: tools, Messages: []llm.Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b",
		ToolCalls: []llm.ToolCall{{ID: "1", Name: "x", Arguments: "{}"}}}}}
	key := headKeyOf(req, false)
	run := func(conv, api string, alt func(int) bool) [][]byte {
		t.Helper()
		h, frags, err := c.encode(conv, api, req, key, head, alt, enc)
		require.NoError(t, err)
		require.Equal(t, `{"messages":[]}`, string(h))
		return frags
	}
	run("s", ModeChat, no)
	require.Equal(t, 2, n)
	require.Equal(t, 1, heads)

	req.Messages = append(req.Messages, llm.Message{Role: "tool", Content: "c"})
	frags := run("s", ModeChat, no)
	require.Equal(t, 3, n, "only the new message is encoded")
	require.Equal(t, 1, heads, "nor the head")
	require.Equal(t, `"afalse"`, string(frags[0]))

	req.Messages[1].ToolCalls[0].Arguments = `{"x":1}` // changed in place: the cache kept its own copy
	run("s", ModeChat, no)
	require.Equal(t, 4, n)

	run("s", ModeChat, func(i int) bool { return i == 1 })
	require.Equal(t, 5, n, "another variant is encoded again")

	tools[0].Function.Description = "changed in place"
	run("s", ModeChat, func(i int) bool { return i == 1 })
	require.Equal(t, 2, heads, "changed tools encode the head again")
	tools[0].Function.Parameters[0] = '[' // a schema's bytes changed in place
	run("s", ModeChat, func(i int) bool { return i == 1 })
	require.Equal(t, 3, heads, "so does a schema changed in place")
	req.Tools = req.Tools[:0]
	run("s", ModeChat, func(i int) bool { return i == 1 })
	require.Equal(t, 4, heads)
	key.effort = "high"
	run("s", ModeChat, func(i int) bool { return i == 1 })
	require.Equal(t, 5, heads, "so do changed options")
	require.Equal(t, 5, n)

	run("s", ModeResponses, no)
	require.Equal(t, 8, n, "another API encodes all")

	run("other", ModeResponses, no)
	require.Equal(t, 11, n, "conversations are apart")

	run("", ModeResponses, no)
	run("", ModeResponses, no)
	require.Equal(t, 17, n, "no conversation, no cache")
	require.Len(t, c.convs, 2)
}

// The cache stays within its bounds: conversations past the count start it
// again, and one history past the size is not kept.
func TestWireCacheIsBounded(t *testing.T) {
	var c wireCache
	enc := func(m *llm.Message, _ bool) ([]byte, error) { return []byte(m.Content), nil }
	head := func() ([]byte, error) { return []byte("[]"), nil }
	no := func(int) bool { return false }
	for i := range maxCachedConvs + 3 {
		req := llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}
		_, _, err := c.encode("conv"+strconv.Itoa(i), ModeChat, req, headKey{}, head, no, enc)
		require.NoError(t, err)
		require.LessOrEqual(t, len(c.convs), maxCachedConvs)
	}
	big := make([]byte, maxCachedConvSize+1)
	req := llm.Request{Messages: []llm.Message{{Role: "user", Content: string(big)}}}
	_, _, err := c.encode("big", ModeChat, req, headKey{}, head, no, enc)
	require.NoError(t, err)
	require.NotContains(t, c.convs, "big")
	require.LessOrEqual(t, c.size, maxCachedConvSize)
}

// Through HTTP: what the endpoint receives is the whole request, on both
// APIs and across requests of one conversation, and the audit log records
// that body.
func TestPrebuiltBodyReachesTheEndpoint(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	logDir := t.TempDir()
	p := f.provider(func(o *Options) { o.LogDir = logDir })
	h := wireHistory()[:2]
	for turn := range 3 {
		req := wireRequest("gpt-4o", h)
		r := collect(context.Background(), p, req)
		require.NoError(t, r.err)
		require.Equal(t, "Hello world", r.content)

		// auto mode: the Responses API first (404 here), then chat.
		if turn == 0 {
			full := responsesRequest(req, false)
			full.Stream = true
			want, _ := json.Marshal(full)
			require.Equal(t, string(want), f.last("/v1/responses").Raw)
		}
		want, _ := json.Marshal(chatRequest(req, false))
		got := f.last("/v1/chat/completions")
		require.Equal(t, string(want), got.Raw, "turn %d", turn)
		require.Equal(t, "application/json", got.Header.Get("Content-Type"))
		h = append(h, llm.Message{Role: llm.RoleAssistant, Content: "Hello world"}, llm.Message{Role: llm.RoleUser, Content: "more " + strconv.Itoa(turn)})
	}
	require.Equal(t, 1, f.count("/v1/responses"), "chat is remembered for the model")
}

// A 307 redirect replays the whole body.
func TestPrebuiltBodySurvivesRedirect(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
	})
	f.handle("/v2/chat/completions", chatOK)
	p := f.provider(func(o *Options) { o.APIMode = ModeChat })
	req := wireRequest("gpt-4o", wireHistory())
	r := collect(context.Background(), p, req)
	require.NoError(t, r.err)
	want, _ := json.Marshal(chatRequest(req, false))
	require.Equal(t, string(want), f.last("/v1/chat/completions").Raw)
	require.Equal(t, string(want), f.last("/v2/chat/completions").Raw)
}

func FuzzPrebuiltBody(f *testing.F) {
	f.Add("gpt-4o", "hi <b>", "think", `{"a":1}`, "out", false)
	f.Add("deepseek-chat", "\xff\u2028", "", "", "", true)
	f.Fuzz(func(t *testing.T, model, content, reasoning, args, result string, second bool) {
		p := New(Options{BaseURL: "http://127.0.0.1:1/v1"})
		deepseek := p.isDeepSeek(model)
		h := []llm.Message{
			{Role: llm.RoleUser, Content: content},
			{Role: llm.RoleAssistant, Content: content, Reasoning: reasoning, ToolCalls: []llm.ToolCall{{ID: result, Name: content, Arguments: args}}},
			{Role: llm.RoleTool, ToolCallID: result, Content: result},
		}
		req := llm.Request{Model: model, Messages: h, Conversation: "c", ReasoningEffort: reasoning,
			Tools: []llm.ToolSchema{{Function: llm.FunctionSchema{Name: content, Description: reasoning}}}}
		for range 2 {
			_, body, err := p.chatBody(req, deepseek)
			want, werr := json.Marshal(chatRequest(req, deepseek))
			if werr != nil {
				require.Error(t, err)
				return
			}
			if err != nil { // the SDK's validator refused the request
				return
			}
			require.Equal(t, string(want), string(body))
			if second {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: args})
			}
		}
	})
}

// BenchmarkChatBody encodes the request of a 1,000-turn conversation: its
// next turn (cached) against a fresh encoding of all of it.
func BenchmarkChatBody(b *testing.B) {
	var h []llm.Message
	for i := range 1000 {
		h = append(h, llm.Message{Role: llm.RoleUser, Content: "question number " + strconv.Itoa(i) + " about the code"},
			llm.Message{Role: llm.RoleAssistant, Content: "an answer of a few words, number " + strconv.Itoa(i)})
	}
	for _, cached := range []bool{true, false} {
		b.Run("cached="+strconv.FormatBool(cached), func(b *testing.B) {
			p := New(Options{BaseURL: "http://127.0.0.1:1/v1"})
			req := wireRequest("gpt-4o", h)
			if !cached {
				req.Conversation = ""
			}
			for b.Loop() {
				if _, _, err := p.chatBody(req, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("sdk", func(b *testing.B) {
		req := wireRequest("gpt-4o", h)
		for b.Loop() {
			if _, err := json.Marshal(chatRequest(req, false)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// spliceBody puts the fragments in the empty list and refuses a head of
// another shape (then the SDK encodes the whole request).
func TestSpliceBody(t *testing.T) {
	frags := [][]byte{[]byte(`{"a":1}`), nil, []byte(`{"b":2}`)}
	body, ok := spliceBody([]byte(`{"model":"m","messages":[],"stream":true}`), `{"model":"m","messages":[]`, frags)
	require.True(t, ok)
	require.Equal(t, `{"model":"m","messages":[{"a":1},{"b":2}],"stream":true}`, string(body))
	body, ok = spliceBody([]byte(`{"model":"m","messages":[]}`), `{"model":"m","messages":[]`, nil)
	require.True(t, ok)
	require.Equal(t, `{"model":"m","messages":[]}`, string(body))
	for _, head := range []string{`{"messages":[],"model":"m"}`, `{"model":"m","messages":null}`, ``} {
		_, ok := spliceBody([]byte(head), `{"model":"m","messages":[]`, frags)
		require.False(t, ok, head)
	}
	_, ok = spliceBody([]byte(`{"input":{}}`), `{"input":{}`, frags)
	require.False(t, ok, "the prefix must end in an empty list")
}

// A tool whose schema is not JSON (a broken MCP server's, say) fails the
// request with an error that says so, sends nothing, and leaves the cache
// fit for the next request of the conversation.
func TestBadToolSchemaIsAClearError(t *testing.T) {
	f := newFakeAPI(t)
	f.handle("/v1/chat/completions", chatOK)
	p := f.provider(func(o *Options) { o.APIMode = ModeChat })
	req := wireRequest("gpt-4o", wireHistory()[:2])
	req.Tools[0].Function.Parameters = json.RawMessage(`{"type":`)
	r := collect(context.Background(), p, req)
	require.Error(t, r.err)
	require.Contains(t, r.err.Error(), "json")
	require.Zero(t, f.count("/v1/chat/completions"), "nothing was sent")

	req.Tools[0].Function.Parameters = json.RawMessage(`{"type":"object"}`)
	r = collect(context.Background(), p, req)
	require.NoError(t, r.err)
	want, _ := json.Marshal(chatRequest(req, false))
	require.Equal(t, string(want), f.last("/v1/chat/completions").Raw)
}
