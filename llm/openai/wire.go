package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/zqagent/sidecar/llm"
)

// Request bodies are built here, not by the SDK. go-openai encodes the whole
// request with encoding/json on every call, so a session's per-turn cost grew
// with its history (a quarter of a 1,000-turn session's CPU was that
// encoding and the garbage it left). A streamed request's messages are
// encoded one by one and kept per conversation (llm.Request.Conversation):
// the next request of that conversation encodes only the messages that
// changed and copies the others. The body is the bytes json.Marshal gives
// for the whole request (tested on a corpus and fuzzed); the SDK is handed
// the request without its messages and still sends it, reads the stream and
// its errors, while the transport swaps in the prebuilt body (prebuiltKey).

// wireCache keeps, per conversation, the messages of the last streamed
// request and their encodings. A message is reused only when it is field
// for field the one encoded before, in the same variant (the strings are
// compared, which is cheap for the engine's own copies: they share their
// bytes).
type wireCache struct {
	mu    sync.Mutex // guards convs, size
	convs map[string]*encodedConv
	size  int // encoded bytes of all entries
}

type encodedConv struct {
	api  string        // ModeChat or ModeResponses: the encodings differ
	head encodedHead   // the rest of the request
	msgs []llm.Message // as encoded (own copies of the slices)
	alt  []bool        // the variant each was encoded in (see encodeFunc)
	enc  [][]byte      // one fragment per message: its items joined by commas; empty sends nothing
	size int
}

// The cache is for the conversations streaming now: past either bound it
// starts again from the entry being added (an entry also keeps its
// messages' strings alive after the engine let them go).
const (
	maxCachedConvs    = 16
	maxCachedConvSize = 8 << 20
)

// encodedHead is the encoding of a request without its messages (the
// model, tools and options), kept for the next request of the conversation:
// a session's tools rarely change, and twenty tools' schemas are most of
// what a short request encodes.
type encodedHead struct {
	key   headKey
	tools []llm.ToolSchema // as encoded (own copy of the slice)
	enc   []byte
}

// headKey is what a head's encoding depends on besides the tools.
type headKey struct {
	model, effort string
	maxTokens     int
	deepseek      bool
}

func headKeyOf(req llm.Request, deepseek bool) headKey {
	return headKey{model: req.Model, effort: req.ReasoningEffort, maxTokens: req.MaxTokens, deepseek: deepseek}
}

// encodeFunc encodes message m in variant alt (for Chat Completions: with
// the reasoning DeepSeek is sent back, see chatReasoning).
type encodeFunc func(m *llm.Message, alt bool) ([]byte, error)

// encode returns the encoded head of a request (built by head, with an
// empty list where the messages go) and the fragment of every message,
// reusing the conversation's previous encodings. alt gives each message's
// variant; conv "" caches nothing.
func (c *wireCache) encode(conv, api string, req llm.Request, key headKey, head func() ([]byte, error), alt func(i int) bool, enc encodeFunc) ([]byte, [][]byte, error) {
	msgs := req.Messages
	// The entry is taken out while it is brought up to date, in place (a
	// copy per request would cost as much as the history is long); a
	// request of the same conversation meanwhile encodes without it.
	var e *encodedConv
	if conv != "" {
		c.mu.Lock()
		if e = c.convs[conv]; e != nil {
			c.size -= e.size
			delete(c.convs, conv)
		}
		c.mu.Unlock()
	}
	if e == nil || e.api != api {
		e = &encodedConv{api: api}
	}
	if e.head.enc == nil || e.head.key != key || !slices.EqualFunc(e.head.tools, req.Tools, sameTool) {
		b, err := head()
		if err != nil {
			return nil, nil, err
		}
		e.head = encodedHead{key: key, tools: cloneTools(req.Tools), enc: b}
	}
	e.size = len(e.head.enc)
	for i := range msgs {
		m, a := &msgs[i], alt(i)
		if i < len(e.msgs) && e.alt[i] == a && sameWire(&e.msgs[i], m) {
			e.size += len(e.enc[i])
			continue
		}
		b, err := enc(m, a)
		if err != nil {
			return nil, nil, err
		}
		// The cache keeps its own slices: a caller that changes a tool call
		// in place must not change the cached copy with it.
		cp := *m
		cp.ToolCalls = slices.Clone(m.ToolCalls)
		cp.Attachments = slices.Clone(m.Attachments)
		cp.AttachmentRefs = nil
		if i < len(e.msgs) {
			e.msgs[i], e.alt[i], e.enc[i] = cp, a, b
		} else {
			e.msgs, e.alt, e.enc = append(e.msgs, cp), append(e.alt, a), append(e.enc, b)
		}
		e.size += len(b)
	}
	clear(e.msgs[len(msgs):]) // let go of what a shorter history dropped
	clear(e.enc[len(msgs):])
	e.msgs, e.alt, e.enc = e.msgs[:len(msgs)], e.alt[:len(msgs)], e.enc[:len(msgs)]
	out := slices.Clone(e.enc) // the entry changes with the next request
	if conv == "" || e.size > maxCachedConvSize {
		return e.head.enc, out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.convs[conv]; old != nil { // a request of the same conversation ran meanwhile
		c.size -= old.size
	}
	if c.convs == nil || len(c.convs) >= maxCachedConvs || c.size+e.size > maxCachedConvSize {
		c.convs, c.size = map[string]*encodedConv{}, 0
	}
	c.convs[conv] = e
	c.size += e.size
	return e.head.enc, out, nil
}

// sameWire reports whether a and b encode the same on the wire.
func sameWire(a, b *llm.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning &&
		a.ToolCallID == b.ToolCallID && a.Name == b.Name &&
		slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.Attachments, b.Attachments)
}

// cloneTools copies tools down to their schemas' bytes: a caller that
// changes a schema in place must not change the cached copy with it.
func cloneTools(tools []llm.ToolSchema) []llm.ToolSchema {
	out := slices.Clone(tools)
	for i := range out {
		out[i].Function.Parameters = bytes.Clone(out[i].Function.Parameters)
	}
	return out
}

// sameTool reports whether a and b encode the same.
func sameTool(a, b llm.ToolSchema) bool {
	return a.Type == b.Type && a.Function.Name == b.Function.Name &&
		a.Function.Description == b.Function.Description && bytes.Equal(a.Function.Parameters, b.Function.Parameters)
}

// joinItems encodes the wire items of one message as one fragment.
func joinItems[T any](items []T) ([]byte, error) {
	var buf []byte
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, b...)
	}
	return buf, nil
}

// spliceBody returns head, the encoding of the request with an empty list
// where the messages go, with the fragments in that list. head must begin
// with prefix, which ends in that empty list ("[]"); json.Marshal writes
// fields in declaration order, and the fields before the list are ones the
// caller set to known values. When it does not (a changed SDK), ok is false
// and the caller lets the SDK encode the whole request.
func spliceBody(head []byte, prefix string, frags [][]byte) (body []byte, ok bool) {
	if !bytes.HasPrefix(head, []byte(prefix)) || len(prefix) < 2 || prefix[len(prefix)-2:] != "[]" {
		return nil, false
	}
	n := len(head) + len(frags)
	for _, f := range frags {
		n += len(f)
	}
	body = make([]byte, 0, n)
	body = append(body, prefix[:len(prefix)-1]...)
	first := true
	for _, f := range frags {
		if len(f) == 0 {
			continue
		}
		if !first {
			body = append(body, ',')
		}
		first = false
		body = append(body, f...)
	}
	body = append(body, ']')
	return append(body, head[len(prefix):]...), true
}

// prebuiltKey carries a request's prebuilt body in its context to the
// transport, which sends it in place of the SDK's encoding.
type prebuiltKey struct{}

func withPrebuilt(ctx context.Context, body []byte) context.Context {
	if body == nil {
		return ctx
	}
	return context.WithValue(ctx, prebuiltKey{}, body)
}
