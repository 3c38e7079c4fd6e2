package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zqagent/sidecar/protocol"
)

// The protocol's wire types, under the names this package has always used.
type (
	// Event is the params of a session.event notification.
	Event = protocol.SessionEvent
	// Dropped is the params of a session.dropped notification: the server
	// stopped streaming a session to this connection (it fell behind).
	// Subscribe again with AfterSeq = LastSeq to continue.
	Dropped = protocol.SessionDropped
	// PendingRequest is an unanswered approval, question, plan or
	// directory request.
	PendingRequest = protocol.PendingRequest
	// SubscribeResult is the result of session.subscribe.
	SubscribeResult = protocol.SessionSubscribeResult
)

// Initialize calls initialize with protocol version 1.
func (c *Client) Initialize(ctx context.Context, name, version string, interruptOnDisconnect bool) (json.RawMessage, error) {
	var res json.RawMessage
	err := c.Call(ctx, "initialize", protocol.InitializeParams{
		Client:                protocol.ClientInfo{Name: name, Version: version},
		ProtocolVersion:       protocol.Exactly(protocol.Version),
		InterruptOnDisconnect: interruptOnDisconnect,
	}, &res)
	return res, err
}

// OpenProject opens a folder as a project and returns its id.
func (c *Client) OpenProject(ctx context.Context, path string) (string, error) {
	var res protocol.Project
	err := c.Call(ctx, "project.open", protocol.ProjectOpenParams{Path: path}, &res)
	return res.ProjectID, err
}

// CreateSession creates a session in a project. extra adds optional params
// (mode, model, agent, title, allowedCommands, shellPolicy, approvalTimeoutMs).
func (c *Client) CreateSession(ctx context.Context, projectID string, extra map[string]any) (string, error) {
	p := map[string]any{"projectId": projectID}
	for k, v := range extra {
		p[k] = v
	}
	var res protocol.SessionCreateResult
	err := c.Call(ctx, "session.create", p, &res)
	return res.SessionID, err
}

// Subscribe streams a session's events with seq > afterSeq as session.event
// notifications: first the stored ones, then live ones.
func (c *Client) Subscribe(ctx context.Context, sessionID string, afterSeq int64) (SubscribeResult, error) {
	var res SubscribeResult
	err := c.Call(ctx, "session.subscribe", protocol.SessionSubscribeParams{SessionID: sessionID, AfterSeq: afterSeq}, &res)
	return res, err
}

// StartTurn starts (or queues) a turn and returns its id.
func (c *Client) StartTurn(ctx context.Context, sessionID, text string) (string, error) {
	var res protocol.TurnResult
	err := c.Call(ctx, "turn.start", protocol.TurnStartParams{SessionID: sessionID, Text: text}, &res)
	return res.TurnID, err
}

// Respond answers a pending request.
func (c *Client) Respond(ctx context.Context, sessionID, requestID string, response any) error {
	b, err := json.Marshal(response)
	if err != nil {
		return fmt.Errorf("request.respond: encode response: %w", err)
	}
	return c.Call(ctx, "request.respond", protocol.RequestRespondParams{SessionID: sessionID, RequestID: requestID, Response: b}, nil)
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
