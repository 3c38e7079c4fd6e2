package store

import (
	"slices"
	"sync"
	"sync/atomic"

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
	msgs  []llm.Message // Attachments cleared, as encoded
	enc   [][]byte
	size  int    // encoded bytes
	token uint64 // names the encoding the entry holds (historyTokens)
}

// encodedCheckpoint is a history encoded for a checkpoint. token names
// this encoding; the first same messages are, byte for byte, those of the
// encoding named prev (0: none known). A writer that committed prev's
// encoding already holds those messages' hashes and need not hash them
// again (wtx.checkpoint): that pass over the whole history per checkpoint
// made a long session's turns slower as it grew.
type encodedCheckpoint struct {
	enc         [][]byte
	token, prev uint64
	same        int
}

// historyTokens are the tokens of encodings, unique in the process.
var historyTokens atomic.Uint64

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
func (c *historyCache) encode(sessionID string, h []llm.Message) (encodedCheckpoint, error) {
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
	prev, same, prefix := e.token, 0, true
	e.token = 0 // while it changes (an error leaves it unnamed)
	e.size = 0
	for i := range h {
		m := h[i]
		m.Attachments = nil
		if i < len(e.msgs) && sameMessage(&e.msgs[i], &m) {
			e.size += len(e.enc[i])
			if prefix {
				same++
			}
			continue
		}
		prefix = false
		b, err := marshalMessage(i, m)
		if err != nil {
			return encodedCheckpoint{}, err
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
	e.token = historyTokens.Add(1)
	out := encodedCheckpoint{enc: slices.Clone(e.enc), token: e.token, prev: prev, same: same} // the entry changes with the next checkpoint
	if prev == 0 {
		out.same = 0
	}
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
