// Package client is a small Go client of the sidecar's WebSocket JSON-RPC
// protocol (ui-protocol.md). It is what the end-to-end tests and the terminal
// demo use, and it documents the protocol by example: read the ready line
// (ReadReady), Dial with the token, Initialize, then Call methods and read
// notifications (session.event and friends) from Notifications.
//
// Concurrency: Call is safe for concurrent use; responses are matched by id.
// One reader goroutine owns the socket's read side and delivers notifications
// in order to a bounded channel; while that channel is full the reader waits,
// which back-pressures the server (which then drops the slow subscription).
// Close stops the reader and waits for it.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/zqagent/sidecar/protocol"
)

// Ready is the sidecar's single stdout line.
type Ready = protocol.ReadyLine

// ReadReady reads the first line of the sidecar's stdout and decodes it.
func ReadReady(r io.Reader) (Ready, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return Ready{}, fmt.Errorf("read ready line: %w", err)
	}
	var rd Ready
	if err := json.Unmarshal([]byte(line), &rd); err != nil {
		return Ready{}, fmt.Errorf("decode ready line %q: %w", strings.TrimSpace(line), err)
	}
	if rd.Event != "ready" || rd.URL == "" {
		return Ready{}, fmt.Errorf("unexpected first line %q", strings.TrimSpace(line))
	}
	return rd, nil
}

// Error is a JSON-RPC error returned by the sidecar, with its
// machine-readable data (Data.Kind, Data.Field, ...).
type Error = protocol.Error

// Error codes (see ui-protocol.md).
const (
	CodeParseError     = protocol.CodeParseError
	CodeInvalidRequest = protocol.CodeInvalidRequest
	CodeMethodNotFound = protocol.CodeMethodNotFound
	CodeInvalidParams  = protocol.CodeInvalidParams
	CodeInternal       = protocol.CodeInternal
	CodeNotInitialized = protocol.CodeNotInitialized
	CodeNotFound       = protocol.CodeNotFound
	CodeConflict       = protocol.CodeConflict
	CodeForbidden      = protocol.CodeForbidden
	CodeConfig         = protocol.CodeConfig
)

// ErrClosed is returned by calls on a closed client.
var ErrClosed = errors.New("client closed")

// Code returns the JSON-RPC code of err (0 when err is not an *Error).
func Code(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// Notification is a server-to-client notification.
type Notification struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Options tune Dial.
type Options struct {
	// Subprotocol sends the token as the zqagent.token.<token> subprotocol
	// (the browser way) instead of an Authorization header.
	Subprotocol bool
	// Origin, when set, is sent as the Origin header.
	Origin string
	// Header adds request headers.
	Header http.Header
	// NotifyBuffer bounds the notification channel (default 4096).
	NotifyBuffer int
	// ReadLimit bounds a received frame (default 64 MiB).
	ReadLimit int64
	// HTTPClient dials the WebSocket (nil: http.DefaultClient).
	HTTPClient *http.Client
	// Check, when set, is run on every frame the sidecar sends, before it
	// is delivered; method is the method of the call a response answers
	// ("" for a notification, or an answer that matches no call). The
	// errors it returns are kept (Violations). The end-to-end tests pass
	// protocol/validate's Validator.Frame here, so every frame is checked
	// against the protocol's schema.
	Check func(method string, frame []byte) error
}

// Client is one connection to the sidecar.
type Client struct {
	ws     *websocket.Conn
	notes  chan Notification
	nextID atomic.Int64
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	check func(method string, frame []byte) error // Options.Check; nil = none

	mu         sync.Mutex // guards pending, err, violations
	pending    map[int64]pendingCall
	err        error   // why the connection ended
	violations []error // what check reported
}

// pendingCall is a call waiting for its answer.
type pendingCall struct {
	method string
	ch     chan rpcResponse
}

type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Dial connects to url (the ready line's) with the token.
func Dial(ctx context.Context, url, token string, opts *Options) (*Client, error) {
	if opts == nil {
		opts = &Options{}
	}
	h := http.Header{}
	for k, v := range opts.Header {
		h[k] = v
	}
	protos := []string{"zqagent.v1"}
	if opts.Subprotocol {
		protos = append(protos, "zqagent.token."+token)
	} else if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if opts.Origin != "" {
		h.Set("Origin", opts.Origin)
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h, Subprotocols: protos, HTTPClient: opts.HTTPClient})
	if err != nil {
		if resp != nil {
			return nil, &DialError{Status: resp.StatusCode, Err: err}
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	limit := opts.ReadLimit
	if limit <= 0 {
		limit = 64 << 20
	}
	ws.SetReadLimit(limit)
	n := opts.NotifyBuffer
	if n <= 0 {
		n = 4096
	}
	cctx, cancel := context.WithCancel(context.Background())
	c := &Client{ws: ws, notes: make(chan Notification, n), ctx: cctx, cancel: cancel, pending: map[int64]pendingCall{}, check: opts.Check}
	c.wg.Go(c.readLoop)
	return c, nil
}

// DialError is a refused upgrade: Status is the HTTP status (401, 403).
type DialError struct {
	Status int
	Err    error
}

func (e *DialError) Error() string { return fmt.Sprintf("dial: HTTP %d: %v", e.Status, e.Err) }
func (e *DialError) Unwrap() error { return e.Err }

// Subprotocol returns the subprotocol the server chose.
func (c *Client) Subprotocol() string { return c.ws.Subprotocol() }

// Notifications delivers the server's notifications in order. It is closed
// when the connection ends.
func (c *Client) Notifications() <-chan Notification { return c.notes }

// Err returns why the connection ended (nil while it is open).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.ctx.Done() }

// Call sends a request and decodes its result into result (which may be
// nil). An error answer is returned as *Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	ch := make(chan rpcResponse, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w: %w", method, ErrClosed, err)
	}
	c.pending[id] = pendingCall{method: method, ch: ch}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if params == nil {
		params = struct{}{}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("%s: send: %w", method, err)
	}
	decode := func(r rpcResponse) error {
		if r.Error != nil {
			return r.Error
		}
		if result != nil {
			if err := json.Unmarshal(r.Result, result); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	}
	select {
	case r := <-ch:
		return decode(r)
	case <-c.ctx.Done():
		// The reader delivers an answer before it sees the close that
		// follows it (a shutdown's reply, then the close frame): an answer
		// already delivered wins over the closed connection.
		select {
		case r := <-ch:
			return decode(r)
		default:
		}
		return fmt.Errorf("%s: %w: %w", method, ErrClosed, c.Err())
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// WriteRaw sends a frame as is (tests use it for malformed input).
func (c *Client) WriteRaw(ctx context.Context, frame []byte) error {
	return c.ws.Write(ctx, websocket.MessageText, frame)
}

func (c *Client) readLoop() {
	defer close(c.notes)
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			c.fail(err)
			return
		}
		c.checkFrame(data)
		if n, ok := fastNotification(data); ok {
			if !c.deliver(n) {
				return
			}
			continue
		}
		var r rpcResponse
		if len(data) > 0 && data[0] == '[' || json.Unmarshal(data, &r) != nil {
			if !c.deliver(Notification{Params: data}) {
				return
			}
			continue
		}
		if r.Method != "" {
			if !c.deliver(Notification{Method: r.Method, Params: r.Params}) {
				return
			}
			continue
		}
		// Answers that match no call (a null id, a batch) are delivered whole
		// as a Notification with an empty Method.
		var id int64
		if len(r.ID) == 0 || string(r.ID) == "null" || json.Unmarshal(r.ID, &id) != nil {
			if !c.deliver(Notification{Params: data}) {
				return
			}
			continue
		}
		c.mu.Lock()
		call, ok := c.pending[id]
		c.mu.Unlock()
		if ok {
			call.ch <- r
		}
	}
}

// checkFrame runs Options.Check on a frame and keeps what it reports.
func (c *Client) checkFrame(data []byte) {
	if c.check == nil {
		return
	}
	method := ""
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	var id int64
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &head) == nil && json.Unmarshal(head.ID, &id) == nil {
		c.mu.Lock()
		method = c.pending[id].method
		c.mu.Unlock()
	}
	if err := c.check(method, data); err != nil {
		c.mu.Lock()
		c.violations = append(c.violations, err)
		c.mu.Unlock()
	}
}

// Violations returns what Options.Check reported so far, in order.
func (c *Client) Violations() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.violations...)
}

func (c *Client) deliver(n Notification) bool {
	select {
	case c.notes <- n:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.cancel()
}

// CloseStatus returns the close code the server sent (-1 when none).
func (c *Client) CloseStatus() websocket.StatusCode { return websocket.CloseStatus(c.Err()) }

// Close closes the connection and waits for the reader.
func (c *Client) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "bye")
	c.fail(ErrClosed)
	c.wg.Wait()
	if err != nil && !errors.Is(err, context.Canceled) && websocket.CloseStatus(err) == -1 {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// notificationPrefix is how the sidecar lays out every notification.
const notificationPrefix = `{"jsonrpc":"2.0","method":"`

// fastNotification splits a notification in the sidecar's own layout
// ({"jsonrpc":"2.0","method":"M","params":P}) without decoding P, which is
// the streaming hot path; any other layout returns false and is decoded
// normally. P is checked to be valid JSON.
func fastNotification(data []byte) (Notification, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(notificationPrefix))
	if !ok {
		return Notification{}, false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 {
		return Notification{}, false
	}
	method := rest[:end]
	for _, c := range method {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return Notification{}, false
		}
	}
	params, ok := bytes.CutPrefix(rest[end:], []byte(`","params":`))
	if !ok || len(params) < 2 || params[len(params)-1] != '}' {
		return Notification{}, false
	}
	params = params[:len(params)-1]
	if !json.Valid(params) {
		return Notification{}, false
	}
	return Notification{Method: string(method), Params: params}, true
}
