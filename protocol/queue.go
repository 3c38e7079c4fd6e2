package protocol

// EventQueueChanged: the session's queue of waiting turns changed.
const EventQueueChanged EventType = "queue_changed"

// QueueEntry is a turn that turn.start acknowledged and that has not
// started yet.
type QueueEntry struct {
	TurnID string `json:"turnId"`
	Text   string `json:"text"`
	// Attachments are the turn's saved attachments.
	Attachments []AttachmentRef `json:"attachments"`
	// Position is the entry's place in the queue, from 0 (the next to
	// start).
	Position int `json:"position"`
	// CreatedAt is when turn.start acknowledged the turn (RFC 3339).
	CreatedAt string `json:"createdAt"`
}

// QueueListResult is the result of queue.list, queue.update, queue.move
// and queue.remove: the queue, in the order its turns will start.
type QueueListResult struct {
	Entries []QueueEntry `json:"entries"`
}

// QueueTurnParams are the params of queue.remove.
type QueueTurnParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	TurnID    string `json:"turnId" rpc:"required"`
}

// QueueUpdateParams are the params of queue.update.
type QueueUpdateParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	TurnID    string `json:"turnId" rpc:"required"`
	// Text replaces the turn's text (at most 1 MiB; its attachments stay).
	Text string `json:"text"`
}

// QueueMoveParams are the params of queue.move.
type QueueMoveParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	TurnID    string `json:"turnId" rpc:"required"`
	// BeforeTurnID is the queued turn to move it in front of; absent: to
	// the end of the queue.
	BeforeTurnID string `json:"beforeTurnId,omitempty"`
}

// QueueChangedData: the queue of waiting turns after a change (a turn was
// queued, started, edited, moved or removed, or the queue was dropped).
type QueueChangedData struct {
	// TaskID is always "": the event belongs to no turn.
	TaskID  string       `json:"taskId"`
	Entries []QueueEntry `json:"entries"`
}

// EventTaskID implements EventData.
func (d QueueChangedData) EventTaskID() string { return d.TaskID }
