package scripted

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type played struct {
	content, reasoning string
	deltas             int
	final              llm.Chunk
	err                error
}

func playAll(ctx context.Context, p llm.Provider, req llm.Request) played {
	var r played
	for ch, err := range p.Stream(ctx, req) {
		if err != nil {
			r.err = err
			return r
		}
		if ch.Content != "" || ch.Reasoning != "" {
			r.deltas++
		}
		r.content += ch.Content
		r.reasoning += ch.Reasoning
		if ch.FinishReason != "" {
			r.final = ch
		}
	}
	return r
}

func user(text string) llm.Request {
	return llm.Request{Model: "scripted", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestScriptPlaysInOrderAndRecords(t *testing.T) {
	usage := &llm.Usage{PromptTokens: 100, CompletionTokens: 5, TotalTokens: 105}
	p := New(
		Response{Text: "Reading the file now.", Reasoning: "think", ChunkSize: 4,
			ToolCalls: []llm.ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "mine", Name: "grep"}}, Usage: usage},
		Response{Text: "Done."},
	)
	require.Equal(t, 2, p.Remaining())
	req := user("read a")
	req.Tools = []llm.ToolSchema{{Type: "function", Function: llm.FunctionSchema{Name: "read_file"}}}
	r := playAll(context.Background(), p, req)
	require.Equal(t, nil, r.err)
	require.Equal(t, "Reading the file now.", r.content)
	require.Equal(t, "think", r.reasoning)
	require.Equal(t, 8, r.deltas, "4-rune deltas: 2 of reasoning, 6 of text")
	require.Equal(t, "tool_calls", r.final.FinishReason)
	require.Equal(t, []llm.ToolCall{{ID: "call_scripted_1", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "mine", Name: "grep", Arguments: "{}"}}, r.final.ToolCalls)
	require.Equal(t, usage, r.final.Usage)

	r = playAll(context.Background(), p, user("next"))
	require.Equal(t, "Done.", r.content)
	require.Equal(t, "stop", r.final.FinishReason)
	if r.final.Usage == nil || r.final.Usage.PromptTokens == 0 || r.final.Usage.TotalTokens != r.final.Usage.PromptTokens+r.final.Usage.CompletionTokens {
		t.Fatalf("usage is estimated when the script has none: %+v", r.final.Usage)
	}
	require.Equal(t, 0, p.Remaining())

	r = playAll(context.Background(), p, user("more"))
	require.Equal(t, ExhaustedText, r.content, "an exhausted script never hangs")
	require.Equal(t, "stop", r.final.FinishReason)

	reqs := p.Requests()
	require.Equal(t, 3, len(reqs))
	require.Equal(t, "read a", reqs[0].Messages[0].Content)
	require.Equal(t, "read_file", reqs[0].Tools[0].Function.Name)
	p.Append(Response{Text: "again"})
	require.Equal(t, "again", playAll(context.Background(), p, user("x")).content)
}

func TestScriptedErrors(t *testing.T) {
	p := New(Response{Text: "partial", Err: "slow down", ErrKind: "rate_limit"}, Response{Err: "boom"})
	r := playAll(context.Background(), p, user("x"))
	require.Equal(t, "partial", r.content, "text streams before the error")
	var le *llm.Error
	if !errors.As(r.err, &le) {
		t.Fatalf("want *llm.Error, got %v", r.err)
	}
	require.Equal(t, llm.KindRateLimit, le.Kind)
	require.Equal(t, "slow down", le.Msg)
	require.Equal(t, llm.KindUnknown, llm.KindOf(playAll(context.Background(), p, user("x")).err))
}

func TestStallEndsWithContext(t *testing.T) {
	p := New(Response{Text: "thinking...", Stall: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	r := playAll(ctx, p, user("x"))
	require.Equal(t, "thinking...", r.content)
	require.Equal(t, context.DeadlineExceeded, r.err)
}

func TestDelayStopsOnCancel(t *testing.T) {
	p := New(Response{Text: strings.Repeat("x", 100), ChunkSize: 1, Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, context.Canceled, playAll(ctx, p, user("x")).err)

	p = New(Response{Text: "abcdef", ChunkSize: 1, Delay: time.Millisecond})
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var got string
	var err error
	for ch, e := range p.Stream(ctx, user("x")) {
		if e != nil {
			err = e
			break
		}
		got += ch.Content
		if got == "abc" {
			cancel()
		}
	}
	require.Equal(t, "abc", got)
	require.Equal(t, context.Canceled, err)
}

func TestChatQueueAndTitles(t *testing.T) {
	p := New()
	p.AppendChat("Scripted title")
	title, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleUser, Content: "ignored"}}})
	require.Equal(t, nil, err)
	require.Equal(t, "Scripted title", title.Text)
	require.Equal(t, &llm.Usage{PromptTokens: 2, CompletionTokens: 4, TotalTokens: 6}, title.Usage, "estimated: four characters a token")
	for _, tc := range []struct{ in, want string }{
		{"fix the login bug in auth.go, please! it crashes on empty passwords", "Fix the login bug in auth.go"},
		{"\n\n  über alles  \nsecond line", "Über alles"},
		{"!!!", "New session"},
	} {
		got, err := p.Chat(context.Background(), llm.ChatRequest{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: tc.in}}})
		require.Equal(t, nil, err)
		require.Equal(t, tc.want, got.Text, tc.in)
	}
	require.Equal(t, 4, len(p.ChatRequests()))
}

func TestLoadScriptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	script := `{"responses":[
		{"text":"Listing.","toolCalls":[{"id":"c1","name":"list_files","arguments":"{\"path\":\".\"}"}],"delay":2,"chunkSize":3},
		{"text":"Done.","delay":"1ms","usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}},
		{"err":"quota","errKind":"rate_limit","delayMs":1},
		{"error":"denied","errorKind":"auth"}
	],"chat":["Title from script"]}`
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	require.Equal(t, nil, err)
	require.Equal(t, 4, p.Remaining())
	r := playAll(context.Background(), p, user("go"))
	require.Equal(t, "Listing.", r.content)
	require.Equal(t, 3, r.deltas)
	require.Equal(t, []llm.ToolCall{{ID: "c1", Name: "list_files", Arguments: `{"path":"."}`}}, r.final.ToolCalls)
	r = playAll(context.Background(), p, user("go"))
	require.Equal(t, &llm.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}, r.final.Usage)
	require.Equal(t, llm.KindRateLimit, llm.KindOf(playAll(context.Background(), p, user("go")).err))
	require.Equal(t, llm.KindAuth, llm.KindOf(playAll(context.Background(), p, user("go")).err))
	title, _ := p.Chat(context.Background(), llm.ChatRequest{})
	require.Equal(t, "Title from script", title.Text)

	for _, bad := range []string{
		`{"responses":[{"txt":"typo"}]}`,
		`{"responses":[{"errorKind":"nope"}]}`,
		`{"responses":[{"delay":"soon"}]}`,
		`{"responses":[{"delay":-5}]}`,
		`{"responses":[{"toolCalls":[{"arguments":"{}"}]}]}`,
		`{"responses":[]} {}`,
		`[1,2]`,
	} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrBadScript) {
			t.Errorf("Parse(%s) = %v, want ErrBadScript", bad, err)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestResponseJSONRoundTrip(t *testing.T) {
	in := Response{Text: "a", Delay: 40 * time.Millisecond, ChunkSize: 2, Stall: true, ErrKind: "server", Err: "x"}
	b, err := in.MarshalJSON()
	require.Equal(t, nil, err)
	if !strings.Contains(string(b), `"delay":"40ms"`) || !strings.Contains(string(b), `"chunkSize":2`) {
		t.Fatalf("camelCase JSON expected: %s", b)
	}
	var out Response
	require.Equal(t, nil, out.UnmarshalJSON(b))
	require.Equal(t, in, out)
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"responses":[{"text":"hi","toolCalls":[{"name":"x","arguments":"{}"}],"delay":1}],"chat":["t"]}`))
	f.Add([]byte(`{"responses":[{"reasoning":"r","stall":true,"err":"e","errKind":"auth","delay":"3ms","chunkSize":1}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrBadScript) {
				t.Fatalf("error not wrapping ErrBadScript: %v", err)
			}
			return
		}
		// A parsed script plays to the end without hanging (delays capped, stalls end with the context).
		for p.Remaining() > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			for _, err := range p.Stream(ctx, user("x")) {
				if err != nil {
					break
				}
			}
			cancel()
		}
	})
}

// A request interrupted before it began still takes its response: the next
// request gets the next one, as a shell counting llm_request events expects.
func TestInterruptedRequestTakesItsResponse(t *testing.T) {
	p := New(Response{Text: "first", Stall: true}, Response{Text: "second"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var gotErr error
	for _, err := range p.Stream(ctx, llm.Request{}) {
		gotErr = err
	}
	require.ErrorIs(t, gotErr, context.Canceled)
	var text string
	for ch, err := range p.Stream(context.Background(), llm.Request{}) {
		require.NoError(t, err)
		text += ch.Content
	}
	require.Equal(t, "second", text)
	require.Len(t, p.Requests(), 2)
}
