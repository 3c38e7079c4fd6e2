package client

import (
	"context"
	"encoding/json"
	"time"
)

// Event is the params of a session.event notification.
type Event struct {
	SessionID string          `json:"sessionId"`
	Seq       int64           `json:"seq"`
	TurnID    string          `json:"turnId,omitempty"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
}

// Dropped is the params of a session.dropped notification: the server
// stopped streaming a session to this connection (it fell behind). Subscribe
// again with AfterSeq = LastSeq to continue.
type Dropped struct {
	SessionID string `json:"sessionId"`
	LastSeq   int64  `json:"lastSeq"`
	Reason    string `json:"reason"`
}

// PendingRequest is an unanswered approval, question, plan or directory
// request.
type PendingRequest struct {
	RequestID string          `json:"requestId"`
	Kind      string          `json:"kind"`
	TurnID    string          `json:"turnId"`
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"createdAt"`
}

// SubscribeResult is the result of session.subscribe.
type SubscribeResult struct {
	LastSeq         int64            `json:"lastSeq"`
	Running         bool             `json:"running"`
	PendingRequests []PendingRequest `json:"pendingRequests"`
}

// Initialize calls initialize with protocol version 1.
func (c *Client) Initialize(ctx context.Context, name, version string, interruptOnDisconnect bool) (json.RawMessage, error) {
	var res json.RawMessage
	err := c.Call(ctx, "initialize", map[string]any{
		"client":                map[string]string{"name": name, "version": version},
		"protocolVersion":       1,
		"interruptOnDisconnect": interruptOnDisconnect,
	}, &res)
	return res, err
}

// OpenProject opens a folder as a project and returns its id.
func (c *Client) OpenProject(ctx context.Context, path string) (string, error) {
	var res struct {
		ProjectID string `json:"projectId"`
	}
	err := c.Call(ctx, "project.open", map[string]string{"path": path}, &res)
	return res.ProjectID, err
}

// CreateSession creates a session in a project. extra adds optional params
// (mode, model, agent, title, allowedCommands, shellPolicy, approvalTimeoutMs).
func (c *Client) CreateSession(ctx context.Context, projectID string, extra map[string]any) (string, error) {
	p := map[string]any{"projectId": projectID}
	for k, v := range extra {
		p[k] = v
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	err := c.Call(ctx, "session.create", p, &res)
	return res.SessionID, err
}

// Subscribe streams a session's events with seq > afterSeq as session.event
// notifications: first the stored ones, then live ones.
func (c *Client) Subscribe(ctx context.Context, sessionID string, afterSeq int64) (SubscribeResult, error) {
	var res SubscribeResult
	err := c.Call(ctx, "session.subscribe", map[string]any{"sessionId": sessionID, "afterSeq": afterSeq}, &res)
	return res, err
}

// StartTurn starts (or queues) a turn and returns its id.
func (c *Client) StartTurn(ctx context.Context, sessionID, text string) (string, error) {
	var res struct {
		TurnID string `json:"turnId"`
	}
	err := c.Call(ctx, "turn.start", map[string]any{"sessionId": sessionID, "text": text}, &res)
	return res.TurnID, err
}

// Respond answers a pending request.
func (c *Client) Respond(ctx context.Context, sessionID, requestID string, response any) error {
	return c.Call(ctx, "request.respond", map[string]any{"sessionId": sessionID, "requestId": requestID, "response": response}, nil)
}

// NextEvent returns the next session.event of sessionID, skipping other
// notifications (a session.dropped of that session is returned as an error).
func (c *Client) NextEvent(ctx context.Context, sessionID string) (Event, error) {
	for {
		select {
		case n, ok := <-c.notes:
			if !ok {
				return Event{}, ErrClosed
			}
			switch n.Method {
			case "session.event":
				var ev Event
				if err := json.Unmarshal(n.Params, &ev); err != nil {
					return Event{}, err
				}
				if ev.SessionID == sessionID {
					return ev, nil
				}
			case "session.dropped":
				var d Dropped
				if json.Unmarshal(n.Params, &d) == nil && d.SessionID == sessionID {
					return Event{}, &DroppedError{Dropped: d}
				}
			}
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// DroppedError reports that the server dropped the subscription.
type DroppedError struct{ Dropped Dropped }

func (e *DroppedError) Error() string {
	return "subscription dropped at seq " + itoa(e.Dropped.LastSeq) + ": " + e.Dropped.Reason
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
