package engine

import (
	"encoding/json"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// Event is one item of a turn's event stream: an event type of seed §9.2 and
// its data, the protocol's type for it (protocol.Events), so what the engine
// emits is what the store records and the UI reads.
type Event struct {
	Type protocol.EventType `json:"type"`
	Data protocol.EventData `json:"data"`
}

// MarshalData returns the JSON of e.Data.
func (e Event) MarshalData() (json.RawMessage, error) { return json.Marshal(e.Data) }

// TaskID returns the turn id an event belongs to ("" when none).
func (e Event) TaskID() string {
	if e.Data == nil {
		return ""
	}
	return e.Data.EventTaskID()
}

// attachmentRefs are the wire form of stored attachments (turn_start,
// queue_steering).
func attachmentRefs(refs []llm.StoredAttachment) []protocol.AttachmentRef {
	if refs == nil {
		return nil
	}
	out := make([]protocol.AttachmentRef, len(refs))
	for i, r := range refs {
		out[i] = protocol.AttachmentRef(r)
	}
	return out
}

// usage is the wire form of a response's token usage (assistant_message).
func usage(u *llm.Usage) *protocol.Usage { return (*protocol.Usage)(u) }
