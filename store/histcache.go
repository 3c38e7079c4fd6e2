package store

import (
	"slices"
	"sync"

	"github.com/zqagent/sidecar/llm"
)

// historyCache keeps, per session, the messages of the last checkpoint a
// caller prepared and their encodings, so that a checkpoint encodes only
// the messages that changed: history grows at the end, and without it
// every iteration_end and turn_end re-encoded the whole history (the
// per-turn cost grew with the session). A message is reused only when it is
// field for field the one encoded before (the strings are compared, which
// is cheap for the engine's own copies: they share their bytes).
type historyCache struct {
	mu       sync.Mutex // guards sessions
	sessions map[string]*encodedHistory
}

type encodedHistory struct {
	msgs []llm.Message // Attachments cleared, as encoded
	enc  [][]byte
}

// maxCachedHistories bounds the cache; past it, it starts again.
const maxCachedHistories = 64

// encode is marshalHistory with the session's cache.
func (c *historyCache) encode(sessionID string, h []llm.Message) ([][]byte, error) {
	c.mu.Lock()
	prev := c.sessions[sessionID]
	c.mu.Unlock()
	out := make([][]byte, len(h))
	next := &encodedHistory{msgs: make([]llm.Message, len(h)), enc: out}
	for i, m := range h {
		m.Attachments = nil
		if prev != nil && i < len(prev.msgs) && sameMessage(&prev.msgs[i], &m) {
			next.msgs[i], out[i] = prev.msgs[i], prev.enc[i]
			continue
		}
		b, err := marshalMessage(i, m)
		if err != nil {
			return nil, err
		}
		// The cache keeps its own slices: a caller that changes a tool call
		// in place must not change the cached copy with it.
		m.ToolCalls = slices.Clone(m.ToolCalls)
		m.AttachmentRefs = slices.Clone(m.AttachmentRefs)
		next.msgs[i], out[i] = m, b
	}
	c.mu.Lock()
	if c.sessions == nil || len(c.sessions) >= maxCachedHistories {
		c.sessions = map[string]*encodedHistory{}
	}
	c.sessions[sessionID] = next
	c.mu.Unlock()
	return out, nil
}

// forget drops a session's entry (it was deleted).
func (c *historyCache) forget(sessionID string) {
	c.mu.Lock()
	delete(c.sessions, sessionID)
	c.mu.Unlock()
}

// sameMessage reports whether a and b encode the same (Attachments aside).
func sameMessage(a, b *llm.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning &&
		a.ToolCallID == b.ToolCallID && a.Name == b.Name && a.Notice == b.Notice &&
		slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.AttachmentRefs, b.AttachmentRefs)
}
