package openai

import (
	"errors"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

// errStopped: the consumer stopped iterating; nothing more is yielded.
var errStopped = errors.New("stream consumer stopped")

// collector is the consumer side of one Stream: it yields deltas, remembers
// whether any content reached the consumer (after which nothing is retried
// or falls back) and gathers what the final chunk and the audit log carry.
type collector struct {
	yield   func(llm.Chunk, error) bool
	emitted bool // content or reasoning was yielded
	stopped bool // yield returned false

	content   strings.Builder
	reasoning strings.Builder
	usage     *llm.Usage
	rates     rateSink // the transport notes each response's rate limits
	calls     []llm.ToolCall
	finish    string
}

func (c *collector) emit(ch llm.Chunk) bool {
	if c.stopped {
		return false
	}
	c.emitted = true
	c.content.WriteString(ch.Content)
	c.reasoning.WriteString(ch.Reasoning)
	if !c.yield(ch, nil) {
		c.stopped = true
	}
	return !c.stopped
}

// announce yields a Retry chunk; it does not count as content.
func (c *collector) announce(r llm.RetryInfo) bool {
	if c.stopped {
		return false
	}
	if !c.yield(llm.Chunk{Retry: &r}, nil) {
		c.stopped = true
	}
	return !c.stopped
}

// reset forgets the end-of-stream state of a failed attempt.
func (c *collector) reset() {
	c.usage, c.calls, c.finish = nil, nil, ""
}
