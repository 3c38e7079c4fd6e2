package ipc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

func (s *Server) requestRoutes() map[string]handler {
	return map[string]handler{
		"request.respond": s.requestRespond,
	}
}

// The wire types of request.respond.
type (
	RespondParams = protocol.RequestRespondParams
	RespondResult = protocol.RequestRespondResult
)

func (s *Server) requestRespond(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p RespondParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	st := s.opts.Store
	req, err := st.Request(ctx, p.RequestID)
	if err != nil {
		return nil, err
	}
	if req.SessionID != p.SessionID {
		return nil, fmt.Errorf("%w: request %q is not a request of session %q", ErrNotFound, p.RequestID, p.SessionID)
	}
	if err := validateResponse(req, p.Response); err != nil {
		return nil, err
	}
	h, err := s.host(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if _, err := st.AnswerRequest(ctx, p.SessionID, p.RequestID, p.Response, ""); err != nil {
		return nil, err
	}
	if h.Deliver(p.RequestID, req.ToolCallID, p.Response) {
		return RespondResult{Answered: true}, nil
	}
	// No turn of this process waits: the request was opened before a
	// restart. The last answer resumes the turn.
	resumed, err := s.resumeIfAnswered(ctx, h, req)
	if err != nil {
		s.log.Warn("resume after answer", "session", p.SessionID, "err", err)
	}
	if resumed {
		c.noteTurn(p.SessionID)
	}
	return RespondResult{Answered: true, Resumed: resumed}, nil
}

// resumeIfAnswered resumes the turn of req when no request of the session
// is pending any more and no turn runs.
func (s *Server) resumeIfAnswered(ctx context.Context, h *backend.Session, req store.PendingRequest) (bool, error) {
	h.LockResume() // two last answers at once resume once
	defer h.UnlockResume()
	pend, err := s.opts.Store.PendingRequests(ctx, h.ID())
	if err != nil {
		return false, err
	}
	if len(pend) > 0 || h.Running() {
		return false, nil
	}
	if _, err := h.Enqueue(ctx, backend.Job{Kind: backend.JobResume, ID: req.TurnID, From: req.TurnID}); err != nil {
		return false, err
	}
	return true, nil
}
