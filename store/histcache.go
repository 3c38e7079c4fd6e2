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
	mu       sync.Mutex // guards sessions, size
	sessions map[string]*encodedHistory
	size     int // encoded bytes of all entries
}

type encodedHistory struct {
	msgs []llm.Message // Attachments cleared, as encoded
	enc  [][]byte
	size int // encoded bytes
}

// The cache is for the sessions streaming now: past either bound it starts
// again from the entry being added (an entry also keeps its messages'
// strings alive after the engine let them go). A history compaction keeps
// within a model's window encodes to well under a megabyte.
const (
	maxCachedHistories    = 16
	maxCachedHistoryBytes = 8 << 20
)

// encode is marshalHistory with the session's cache. The entry is taken
// out while it is brought up to date, in place (a copy per checkpoint would
// cost as much as the history is long); a checkpoint of the same session
// meanwhile encodes without it.
func (c *historyCache) encode(sessionID string, h []llm.Message) ([][]byte, error) {
	c.mu.Lock()
	e := c.sessions[sessionID]
	if e != nil {
		c.size -= e.size
		delete(c.sessions, sessionID)
	}
	c.mu.Unlock()
	if e == nil {
		e = &encodedHistory{}
	}
	e.size = 0
	for i := range h {
		m := h[i]
		m.Attachments = nil
		if i < len(e.msgs) && sameMessage(&e.msgs[i], &m) {
			e.size += len(e.enc[i])
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
		if i < len(e.msgs) {
			e.msgs[i], e.enc[i] = m, b
		} else {
			e.msgs, e.enc = append(e.msgs, m), append(e.enc, b)
		}
		e.size += len(b)
	}
	clear(e.msgs[len(h):]) // let go of what a shorter history dropped
	clear(e.enc[len(h):])
	e.msgs, e.enc = e.msgs[:len(h)], e.enc[:len(h)]
	out := slices.Clone(e.enc) // the entry changes with the next checkpoint
	if e.size > maxCachedHistoryBytes {
		return out, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.sessions[sessionID]; old != nil { // a checkpoint of the same session ran meanwhile
		c.size -= old.size
	}
	if c.sessions == nil || len(c.sessions) >= maxCachedHistories || c.size+e.size > maxCachedHistoryBytes {
		c.sessions, c.size = map[string]*encodedHistory{}, 0
	}
	c.sessions[sessionID] = e
	c.size += e.size
	return out, nil
}

// forget drops a session's entry (it was deleted).
func (c *historyCache) forget(sessionID string) {
	c.mu.Lock()
	if old := c.sessions[sessionID]; old != nil {
		c.size -= old.size
		delete(c.sessions, sessionID)
	}
	c.mu.Unlock()
}

// sameMessage reports whether a and b encode the same (Attachments aside).
func sameMessage(a, b *llm.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning &&
		a.ToolCallID == b.ToolCallID && a.Name == b.Name && a.Notice == b.Notice &&
		slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.AttachmentRefs, b.AttachmentRefs)
}
