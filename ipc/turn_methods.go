package ipc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/zqagent/sidecar/engine"
)

func (s *Server) turnRoutes() map[string]handler {
	return map[string]handler{
		"turn.start":     s.turnStart,
		"turn.interrupt": s.turnInterrupt,
		"turn.retry":     s.turnRetry,
		"turn.resume":    s.turnResume,
		"turn.steer":     s.turnSteer,
		"turn.unsteer":   s.turnUnsteer,
	}
}

// TurnStartParams are the params of turn.start.
type TurnStartParams struct {
	SessionID   string           `json:"sessionId" rpc:"required"`
	Text        string           `json:"text"`
	Attachments []AttachmentWire `json:"attachments,omitempty"`
}

// TurnResult is the result of turn.start, turn.retry and turn.resume.
type TurnResult struct {
	TurnID string `json:"turnId"`
	// Queued is the number of turns ahead of this one (0: it starts now).
	Queued int `json:"queued"`
}

func newTurnID() string { return "turn_" + uuid.NewString() }

func (s *Server) turnStart(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p TurnStartParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Text == "" && len(p.Attachments) == 0 {
		return nil, invalidField("text", "required (or attachments)")
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	atts, refs, err := saveAttachments(s.opts.Store.SessionDir(p.SessionID), p.Attachments)
	if err != nil {
		return nil, err
	}
	id := newTurnID()
	pos, err := h.enqueue(turnJob{kind: jobStart, id: id, input: engine.Input{Text: p.Text, TaskID: id, Attachments: atts, Refs: refs}})
	if err != nil {
		return nil, err
	}
	c.noteTurn(p.SessionID)
	return TurnResult{TurnID: id, Queued: pos}, nil
}

func (s *Server) turnInterrupt(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	running, dropped := h.interrupt()
	return struct {
		Interrupted bool     `json:"interrupted"`
		Dropped     []string `json:"dropped"`
	}{running, dropped}, nil
}

func (s *Server) turnRetry(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	eng, err := h.engine(ctx, false)
	if err != nil {
		return nil, err
	}
	if h.running() {
		return nil, fmt.Errorf("%w: session %s has a running turn; retry after it ended", ErrConflict, p.SessionID)
	}
	if last := eng.LastError(); last == nil || !last.Retriable {
		return nil, fmt.Errorf("%w: %w", ErrConflict, engine.ErrNothingToRetry)
	}
	id := newTurnID()
	pos, err := h.enqueue(turnJob{kind: jobRetry, id: id})
	if err != nil {
		return nil, err
	}
	c.noteTurn(p.SessionID)
	return TurnResult{TurnID: id, Queued: pos}, nil
}

func (s *Server) turnResume(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p sessionIDParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if h.running() {
		return nil, fmt.Errorf("%w: session %s has a running turn", ErrConflict, p.SessionID)
	}
	turnID, err := s.resumeTurnID(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	pos, err := h.enqueue(turnJob{kind: jobResume, id: turnID})
	if err != nil {
		return nil, err
	}
	c.noteTurn(p.SessionID)
	return TurnResult{TurnID: turnID, Queued: pos}, nil
}

// resumeTurnID is the turn a resume continues: the turn of the session's
// pending requests, else the turn of its last stored event.
func (s *Server) resumeTurnID(ctx context.Context, sessionID string) (string, error) {
	pend, err := s.opts.Store.PendingRequests(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if len(pend) > 0 {
		return pend[0].TurnID, nil
	}
	last, err := s.opts.Store.LastSeq(ctx, sessionID)
	if err != nil || last == 0 {
		return "", err
	}
	evs, err := s.opts.Store.EventsAfter(ctx, sessionID, last-1, 1)
	if err != nil || len(evs) == 0 {
		return "", err
	}
	return evs[0].TurnID, nil
}

type steerParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	Text      string `json:"text" rpc:"required"`
}

func (s *Server) turnSteer(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p steerParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if !h.running() {
		return nil, fmt.Errorf("%w: no turn is running in session %s; use turn.start", ErrConflict, p.SessionID)
	}
	eng, err := h.engine(ctx, false)
	if err != nil {
		return nil, err
	}
	eng.QueueSteering(p.Text, nil, nil)
	return struct {
		Queued bool `json:"queued"`
	}{true}, nil
}

func (s *Server) turnUnsteer(ctx context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p steerParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if _, err := s.host(ctx, p.SessionID); err != nil {
		return nil, err
	}
	removed := false
	if eng := s.loadedEngine(p.SessionID); eng != nil {
		removed = eng.RemoveSteering(p.Text)
	}
	return struct {
		Removed bool `json:"removed"`
	}{removed}, nil
}
