package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// PendingRequest is a durable interactive request (approval, question,
// plan, directory). It survives restarts until answered or closed.
type PendingRequest struct {
	RequestID  string          `json:"requestId"`
	SessionID  string          `json:"sessionId"`
	Kind       string          `json:"kind"`
	TurnID     string          `json:"turnId"`
	ToolCallID string          `json:"toolCallId"`
	Seq        int64           `json:"seq"` // the event that opened it
	Data       json.RawMessage `json:"data"`
	CreatedAt  time.Time       `json:"createdAt"`
	Answered   bool            `json:"answered"`
	Response   json.RawMessage `json:"response,omitempty"`
	AnsweredAt *time.Time      `json:"answeredAt,omitempty"`
	AnswerNote string          `json:"answerNote,omitempty"`
}

const requestCols = `r.request_id, s.id, r.kind, r.turn_id, r.tool_call_id, r.seq, r.data, r.created_at,
	r.answered, r.response, r.answered_at, r.answer_note`

const requestFrom = " FROM pending_requests r JOIN sessions s ON s.pk = r.session_pk"

func scanRequest(r scanner) (PendingRequest, error) {
	var p PendingRequest
	var data, resp []byte
	var created int64
	var answeredAt *int64
	if err := r.Scan(&p.RequestID, &p.SessionID, &p.Kind, &p.TurnID, &p.ToolCallID, &p.Seq, &data, &created,
		&p.Answered, &resp, &answeredAt, &p.AnswerNote); err != nil {
		return PendingRequest{}, err
	}
	p.Data = json.RawMessage(data)
	if resp != nil {
		p.Response = json.RawMessage(resp)
	}
	p.CreatedAt = fromMS(created)
	if answeredAt != nil {
		t := fromMS(*answeredAt)
		p.AnsweredAt = &t
	}
	return p, nil
}

// PendingRequests returns the session's unanswered requests, oldest first.
func (s *Store) PendingRequests(ctx context.Context, sessionID string) ([]PendingRequest, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("pending requests: %w", err)
	}
	return pendingRequests(ctx, s.rdb, pk)
}

func pendingRequests(ctx context.Context, q queryer, pk int64) ([]PendingRequest, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+requestCols+requestFrom+
		" WHERE r.session_pk = ? AND r.answered = 0 ORDER BY r.seq, r.rowid", pk)
	if err != nil {
		return nil, fmt.Errorf("pending requests: %w", err)
	}
	defer rows.Close()
	out := []PendingRequest{}
	for rows.Next() {
		p, err := scanRequest(rows)
		if err != nil {
			return nil, fmt.Errorf("pending requests: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending requests: %w", err)
	}
	return out, nil
}

// Request returns a request, answered or not.
func (s *Store) Request(ctx context.Context, requestID string) (PendingRequest, error) {
	p, err := scanRequest(s.rdb.QueryRowContext(ctx, "SELECT "+requestCols+requestFrom+" WHERE r.request_id = ?", requestID))
	if err != nil {
		return PendingRequest{}, fmt.Errorf("request: %w", notFound(err, "request", requestID))
	}
	return p, nil
}

// AnswerRequest records the answer to a pending request of sessionID. The
// first answer wins: a request of another session or an unknown id is
// ErrNotFound, an answered or closed one ErrAlreadyAnswered. To record an
// event with the answer, in its transaction, append it with
// EventInput.Answer instead.
func (s *Store) AnswerRequest(ctx context.Context, sessionID, requestID string, response json.RawMessage, note string) (PendingRequest, error) {
	a := Answer{RequestID: requestID, Response: response, Note: note}
	if err := a.prepare(); err != nil {
		return PendingRequest{}, fmt.Errorf("answer request: %w", err)
	}
	var out PendingRequest
	err := s.write(ctx, func(t *wtx) error {
		p, err := t.answer(sessionID, a)
		out = p
		return err
	})
	if err != nil {
		return PendingRequest{}, fmt.Errorf("answer request: %w", err)
	}
	return out, nil
}

// Answer is the answer to a pending request (AnswerRequest,
// EventInput.Answer).
type Answer struct {
	RequestID string
	Response  json.RawMessage // a JSON value; empty means null
	Note      string
}

// prepare checks a and defaults its response.
func (a *Answer) prepare() error {
	if a.RequestID == "" {
		return fmt.Errorf("%w: answer without a request id", ErrInvalid)
	}
	if len(a.Response) == 0 {
		a.Response = json.RawMessage("null")
	}
	if !json.Valid(a.Response) {
		return fmt.Errorf("%w: response is not JSON", ErrInvalid)
	}
	return nil
}

// answer stores a in the transaction. Its errors are refusals (nothing is
// written when it fails).
func (t *wtx) answer(sessionID string, a Answer) (PendingRequest, error) {
	p, err := scanRequest(t.queryRow("SELECT "+requestCols+requestFrom+" WHERE r.request_id = ?", a.RequestID))
	if err != nil {
		return PendingRequest{}, refuse(notFound(err, "request", a.RequestID))
	}
	if p.SessionID != sessionID {
		return PendingRequest{}, refuse(fmt.Errorf("request %q of session %q: %w", a.RequestID, sessionID, ErrNotFound))
	}
	if p.Answered {
		return PendingRequest{}, refuse(fmt.Errorf("request %q: %w", a.RequestID, ErrAlreadyAnswered))
	}
	now := t.nowMS()
	if _, err := t.exec(`UPDATE pending_requests SET answered = 1, response = ?, answered_at = ?,
		answer_note = ? WHERE request_id = ?`, string(a.Response), now, a.Note, a.RequestID); err != nil {
		return PendingRequest{}, err
	}
	at := fromMS(now)
	p.Answered, p.Response, p.AnsweredAt, p.AnswerNote = true, a.Response, &at, a.Note
	return p, nil
}

// CloseRequests closes every unanswered request of a session without an
// answer (they can no longer be answered) and returns their ids.
func (s *Store) CloseRequests(ctx context.Context, sessionID, note string) ([]string, error) {
	var ids []string
	err := s.write(ctx, func(t *wtx) error {
		ids = ids[:0]
		st, err := t.session(sessionID)
		if err != nil {
			return err
		}
		rows, err := t.query("SELECT request_id FROM pending_requests WHERE session_pk = ? AND answered = 0", st.pk)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = t.exec(`UPDATE pending_requests SET answered = 1, answered_at = ?, answer_note = ?
			WHERE session_pk = ? AND answered = 0`, t.nowMS(), note, st.pk)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("close requests: %w", err)
	}
	return ids, nil
}
