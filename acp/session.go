package acp

import (
	"context"
	"encoding/json"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/protocol"
)

// maxEnded bounds the turn ends a session keeps for a Prompt that has not
// registered yet (turns of the other front door end here too).
const maxEnded = 64

// turnEnd is how a turn ended, for its Prompt.
type turnEnd struct {
	end     protocol.TurnEndData
	lastErr string
}

// session is one ACP session of this connection: a sidecar session this
// connection created or loaded and is subscribed to.
type session struct {
	id   string
	root string      // the project folder
	lang string      // the session's language, of the cards this front door writes
	tr   *translator // owned by the dispatcher goroutine

	mu sync.Mutex // guards the fields below
	// loading is true from session/load's subscribe until the replay
	// reached replayTo (-1: not known yet): events until then are history.
	loading  bool
	replayTo int64
	replayed chan struct{} // closed when the replay is done
	seen     int64         // last seq handled
	waiters  map[string]chan turnEnd
	ended    map[string]turnEnd // turn ends nobody waited for yet, by turn id
	endOrder []string
	lastErr  map[string]string                      // last error message per running turn
	asks     map[string]map[*int]context.CancelFunc // questions in flight per turn id
	mcp      *editorMCP                             // the editor's MCP servers (mcp.go); nil: none

	askMCP sync.Mutex // serializes the prompts' questions about the editor's MCP servers
}

func newSession(id, root string) *session {
	return &session{
		id: id, root: root, tr: newTranslator(root),
		replayTo: -1,
		waiters:  map[string]chan turnEnd{},
		ended:    map[string]turnEnd{},
		lastErr:  map[string]string{},
		asks:     map[string]map[*int]context.CancelFunc{},
	}
}

// startLoad marks the session as replaying history until replayDone.
func (s *session) startLoad() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loading, s.replayTo, s.replayed = true, -1, make(chan struct{})
}

// replayUntil records the last stored seq of the replay and returns a
// channel closed when the dispatcher handled it.
func (s *session) replayUntil(last int64) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replayTo = last
	if s.loading && s.seen >= last {
		s.loading = false
		close(s.replayed)
	}
	return s.replayed
}

// handled records that the dispatcher handled the event with seq and
// reports whether it is part of a session/load replay, and whether it was
// handled before (a subscription renewed after session.dropped replays from
// the last seq handled, while older frames may still be queued).
func (s *session) handled(seq int64) (history, dup bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.seen && seq > 0 {
		return false, true
	}
	s.seen = max(s.seen, seq)
	history = s.loading && (s.replayTo < 0 || seq <= s.replayTo)
	if s.loading && s.replayTo >= 0 && s.seen >= s.replayTo {
		s.loading = false
		close(s.replayed)
	}
	return history, false
}

// wait registers for the end of a turn; the channel receives it once.
func (s *session) wait(turnID string) <-chan turnEnd {
	ch := make(chan turnEnd, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.ended[turnID]; ok {
		delete(s.ended, turnID)
		ch <- e
		return ch
	}
	s.waiters[turnID] = ch
	return ch
}

// unwait drops a waiter (the prompt gave up).
func (s *session) unwait(turnID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiters, turnID)
}

// noteError keeps a turn's last error for its stop reason.
func (s *session) noteError(turnID, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr[turnID] = msg
}

// askContext is the context of a question to the editor about turnID: it
// ends with parent or when the turn ends. done releases it.
func (s *session) askContext(parent context.Context, turnID string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	key := new(int)
	s.mu.Lock()
	if s.asks[turnID] == nil {
		s.asks[turnID] = map[*int]context.CancelFunc{}
	}
	s.asks[turnID][key] = cancel
	s.mu.Unlock()
	return ctx, func() {
		cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.asks[turnID], key)
		if len(s.asks[turnID]) == 0 {
			delete(s.asks, turnID)
		}
	}
}

// endTurn hands a turn's end to its prompt, or keeps it for one that
// registers later.
func (s *session) endTurn(turnID string, end protocol.TurnEndData) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := turnEnd{end: end, lastErr: s.lastErr[turnID]}
	delete(s.lastErr, turnID)
	for _, cancel := range s.asks[turnID] {
		cancel() // questions of the turn that nobody needs any more
	}
	if ch, ok := s.waiters[turnID]; ok {
		delete(s.waiters, turnID)
		ch <- e
		return
	}
	s.ended[turnID] = e
	s.endOrder = append(s.endOrder, turnID)
	if len(s.endOrder) > maxEnded {
		delete(s.ended, s.endOrder[0])
		s.endOrder = s.endOrder[1:]
	}
}

// handle is the dispatcher's work for one event of this session: the
// updates it shows, the question it asks, the turn it ends.
func (a *Agent) handle(ctx context.Context, s *session, ev protocol.SessionEvent) {
	history, dup := s.handled(ev.Seq)
	if dup {
		return
	}
	ups, err := s.tr.updates(ev, history)
	if err != nil {
		a.log.Warn("acp: map event", "session", s.id, "type", ev.Type, "seq", ev.Seq, "err", err)
	}
	for _, u := range ups {
		if err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u}); err != nil {
			a.log.Debug("acp: session update", "session", s.id, "err", err)
		}
	}
	switch protocol.EventType(ev.Type) {
	case protocol.EventError:
		var d protocol.EventErrorData
		if json.Unmarshal(ev.Data, &d) == nil {
			s.noteError(ev.TurnID, d.Error)
		}
	case protocol.EventTurnEnd:
		var d protocol.TurnEndData
		if json.Unmarshal(ev.Data, &d) == nil {
			s.endTurn(ev.TurnID, d)
		}
	case protocol.EventPermissionRequired, protocol.EventPlanProposed, protocol.EventDirectoryRequested, protocol.EventAskUserQuestion:
		if history {
			return // answered long ago, or listed as pending by the subscribe
		}
		a.ask(s, ev.TurnID, ev.Type, ev.Data)
	}
}
