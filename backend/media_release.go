package backend

import (
	"sync/atomic"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// mediaRelease is an engine hook that gives memory back to the OS after
// each model response of a turn that carries uploaded attachments, and
// after the turn: each model request of such a turn read the attachments'
// files and encoded them again (tens of MB for uploads at the limit), and
// a sidecar that idles afterwards would keep that garbage resident until
// the runtime's next periodic GC.
type mediaRelease struct {
	engine.BaseHook
	release func()      // Options.ReleaseMemory
	media   atomic.Bool // the running turn carries attachments
}

var (
	_ engine.Hook     = (*mediaRelease)(nil)
	_ engine.Observer = (*mediaRelease)(nil)
)

// Observe notes whether a turn that starts carries attachments.
func (h *mediaRelease) Observe(ev engine.Event) {
	if d, ok := ev.Data.(protocol.TurnStartData); ok {
		h.media.Store(d.AttachmentCount > 0)
	}
}

// OnAssistantMessage follows a model response.
func (h *mediaRelease) OnAssistantMessage(string, []string, *llm.Usage) {
	if h.media.Load() {
		h.release()
	}
}

// OnTurnEnd follows the turn (also one whose request failed).
func (h *mediaRelease) OnTurnEnd(string, int, []string) {
	if h.media.Swap(false) {
		h.release()
	}
}
