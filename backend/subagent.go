package backend

import (
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
)

// subagentHook forwards the tool calls of an explore subagent to the UI: each
// of its tool_finished events is recorded in the parent session, in the
// parent's turn, with parentReqId = the explore call. Deltas and the
// subagent's own turn events are not forwarded (the explore call's
// tool_finished reports its result).
type subagentHook struct {
	engine.BaseHook
	h      *Session
	parent string // the explore tool call id
}

var _ engine.Observer = subagentHook{}

func (h *Session) SubagentHook(parentCallID string) engine.Hook {
	return subagentHook{h: h, parent: parentCallID}
}

// Observe implements engine.Observer; it runs on the subagent's goroutine.
func (sh subagentHook) Observe(ev engine.Event) {
	d, ok := ev.Data.(protocol.ToolFinishedData)
	if !ok {
		return
	}
	d.ParentReqID = sh.parent
	fwd := engine.Event{Type: protocol.EventToolFinished, Data: d}
	in, err := durableInput(fwd, nil, "")
	if err != nil {
		return
	}
	sh.h.mu.Lock()
	in.TurnID = sh.h.current
	sh.h.mu.Unlock()
	sh.h.deltas.cut()
	sh.h.s.opts.Store.Enqueue(sh.h.id, in, sh.h.committedEvent)
}
