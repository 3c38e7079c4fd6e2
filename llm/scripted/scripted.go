package scripted

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/zqagent/sidecar/llm"
)

// ExhaustedText is streamed when a script has no response left.
const ExhaustedText = "(script exhausted)"

// Provider plays scripted responses.
type Provider struct {
	react func(llm.Request) Response // optional: answers when the queue is empty (Demo)
	names *demoText                  // the demo's language: it names sessions (NamesSessions)

	mu           sync.Mutex // guards queue, chat, requests, chatRequests, calls, gates, gateDir
	queue        []Response
	chat         []string
	requests     []llm.Request
	chatRequests []llm.ChatRequest
	calls        int // tool calls handed out, for generated ids
	gates        map[string]*Gate
	gateDir      string // file-backed gates (Script.GateDir); "" = in-process only
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider that answers Stream calls with responses in order.
func New(responses ...Response) *Provider {
	return &Provider{queue: slices.Clone(responses)}
}

// Append adds responses to the end of the script.
func (p *Provider) Append(responses ...Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, responses...)
}

// AppendChat adds answers for Chat calls.
func (p *Provider) AppendChat(texts ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chat = append(p.chat, texts...)
}

// Remaining returns how many Stream responses are left.
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Requests returns the Stream requests received so far, in order.
func (p *Provider) Requests() []llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// ChatRequests returns the Chat requests received so far, in order.
func (p *Provider) ChatRequests() []llm.ChatRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.chatRequests)
}

// next records req and picks its response.
func (p *Provider) next(req llm.Request) Response {
	req.Messages = slices.Clone(req.Messages)
	req.Tools = slices.Clone(req.Tools)
	p.mu.Lock()
	p.requests = append(p.requests, req)
	var r Response
	switch {
	case len(p.queue) > 0:
		r = p.queue[0]
		p.queue = p.queue[1:]
	case p.react != nil:
		p.mu.Unlock()
		r = p.react(req)
		p.mu.Lock()
	default:
		r = Response{Text: ExhaustedText}
	}
	r.ToolCalls = slices.Clone(r.ToolCalls)
	for i := range r.ToolCalls {
		p.calls++
		if r.ToolCalls[i].ID == "" {
			r.ToolCalls[i].ID = fmt.Sprintf("call_scripted_%d", p.calls)
		}
		if r.ToolCalls[i].Arguments == "" {
			r.ToolCalls[i].Arguments = "{}"
		}
	}
	p.mu.Unlock()
	return r
}

// Stream implements llm.Provider by playing the next response.
func (p *Provider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		// Every request takes its response, also one interrupted before
		// it began: the script stays aligned with the llm_request events a
		// shell sees (an interrupt right after llm_request would otherwise
		// leave that response to the next request).
		r := p.next(req)
		if err := ctx.Err(); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		p.play(ctx, req, r, yield)
	}
}

func (p *Provider) play(ctx context.Context, req llm.Request, r Response, yield func(llm.Chunk, error) bool) {
	// send yields one delta after the response's delay; false ends the stream.
	send := func(ch llm.Chunk) bool {
		if r.Delay > 0 {
			if err := sleep(ctx, r.Delay); err != nil {
				yield(llm.Chunk{}, err)
				return false
			}
		} else if err := ctx.Err(); err != nil {
			yield(llm.Chunk{}, err)
			return false
		}
		return yield(ch, nil)
	}
	for _, s := range pieces(r.Reasoning, r.ChunkSize) {
		if !send(llm.Chunk{Reasoning: s}) {
			return
		}
	}
	for _, s := range pieces(r.Text, r.ChunkSize) {
		if !send(llm.Chunk{Content: s}) {
			return
		}
	}
	if r.Gate != "" {
		if err := p.wait(ctx, r.Gate); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
	}
	if r.Stall {
		<-ctx.Done()
		yield(llm.Chunk{}, ctx.Err())
		return
	}
	if r.Err != "" {
		kind, _ := kindOf(r.ErrKind)
		if r.RateLimits != nil && !yield(llm.Chunk{RateLimits: r.RateLimits}, nil) {
			return
		}
		yield(llm.Chunk{}, &llm.Error{Kind: kind, Msg: r.Err})
		return
	}
	final := llm.Chunk{ToolCalls: r.ToolCalls, Usage: r.Usage, FinishReason: r.FinishReason, RateLimits: r.RateLimits}
	if final.FinishReason == "" {
		final.FinishReason = "stop"
		if len(r.ToolCalls) > 0 {
			final.FinishReason = "tool_calls"
		}
	}
	if final.Usage == nil {
		final.Usage = estimate(req, r)
	}
	send(final)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// estimate guesses token usage at about four characters a token.
func estimate(req llm.Request, r Response) *llm.Usage {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content) + len(m.Reasoning)
		for _, c := range m.ToolCalls {
			in += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		in += len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters)
	}
	out := len(r.Text) + len(r.Reasoning)
	for _, c := range r.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	u := &llm.Usage{PromptTokens: (in + 3) / 4, CompletionTokens: (out + 3) / 4, ReasoningTokens: (len(r.Reasoning) + 3) / 4}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// Chat implements llm.Provider: the next scripted chat answer, or a short
// title made from the first user message, with its usage estimated at about
// four characters a token.
func (p *Provider) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return llm.ChatResponse{}, err
	}
	text := p.chatText(req)
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	u := &llm.Usage{PromptTokens: (in + 3) / 4, CompletionTokens: (len(text) + 3) / 4}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return llm.ChatResponse{Text: text, Usage: u}, nil
}

func (p *Provider) chatText(req llm.ChatRequest) string {
	req.Messages = slices.Clone(req.Messages)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chatRequests = append(p.chatRequests, req)
	if len(p.chat) > 0 {
		s := p.chat[0]
		p.chat = p.chat[1:]
		return s
	}
	if p.names != nil {
		title := titleOf(req.Messages)
		if title == "" {
			return p.names.newSession
		}
		return fmt.Sprintf(p.names.name, title)
	}
	if title := titleOf(req.Messages); title != "" {
		return title
	}
	return "New session"
}

// NamesSessions reports whether the sidecar should name sessions with this
// provider's Chat like it does with a real model: the demo does (in its
// language), a script does not (its tests count chat calls).
func (p *Provider) NamesSessions() bool { return p.names != nil }

// titleOf makes a title of at most six words from the first user message;
// "" when there is none.
func titleOf(msgs []llm.Message) string {
	for _, m := range msgs {
		if m.Role != llm.RoleUser {
			continue
		}
		words := strings.FieldsFunc(firstLine(m.Content), func(r rune) bool {
			return unicode.IsSpace(r) || (unicode.IsPunct(r) && r != '-' && r != '\'' && r != '_' && r != '.')
		})
		if len(words) == 0 {
			continue
		}
		if len(words) > 6 {
			words = words[:6]
		}
		r := []rune(strings.Join(words, " "))
		if len(r) > 48 {
			r = r[:48]
		}
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	}
	return ""
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}
