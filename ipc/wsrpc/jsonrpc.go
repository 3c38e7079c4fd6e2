package wsrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxBatch is the largest batch the server handles; a larger one is refused
// as a whole with -32600.
const MaxBatch = 100

// MaxIDBytes bounds a request id as written (a string id of more is refused
// with a null id: an error never echoes more than a few hundred bytes).
const MaxIDBytes = 256

// maxMethodBytes bounds a method name; no method is that long.
const maxMethodBytes = 128

// request is one parsed JSON-RPC request or client notification.
type request struct {
	ID     json.RawMessage // nil for a notification
	Method string
	Params json.RawMessage
	// arrival is the request's place among those its connection read,
	// from 1 (Arrival).
	arrival uint64
}

func (r *request) isNotification() bool { return r.ID == nil }

// rawRequest is the wire shape, its members as written (aliasing the
// frame), so that each member can be validated with a precise message.
type rawRequest struct {
	JSONRPC, ID, Method, Params []byte
}

// parsed is one element of a frame: a valid request, or the error response to
// send for an invalid one (with the id when it could be read, else null).
type parsed struct {
	req *request
	err *WireError
	id  json.RawMessage
}

// frameDecoder reads JSON values straight from data, without copying them
// (jsontext parses a bytes.Buffer in place); like encoding/json, it
// accepts invalid UTF-8 in strings and repeated member names (the last
// wins).
func frameDecoder(data []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// readWhole reads data as exactly one JSON value, in place.
func readWhole(data []byte) (jsontext.Value, error) {
	dec := frameDecoder(data)
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return v, nil
}

// Members calls f with each member of a JSON object, as written (name
// unquoted, value raw); both alias obj, which must be one valid JSON
// object (an element of a parsed frame, or params). It stops at the first
// error f returns. Handlers whose params may be large (turn.start's
// attachments) walk them with it instead of copying them.
func Members(obj []byte, f func(name string, value jsontext.Value) error) error {
	dec := frameDecoder(obj)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errors.New("not an object")
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		// A member name longer than any we know is skipped unread.
		var key string
		if len(name) <= maxMethodBytes {
			k, err := jsontext.AppendUnquote(nil, name)
			if err != nil {
				return err
			}
			key = string(k)
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := f(key, v); err != nil {
			return err
		}
	}
	return nil
}

// Elements calls f with each element of a JSON array, as written; they
// alias arr, which must be one valid JSON array.
func Elements(arr []byte, f func(i int, value jsontext.Value) error) error {
	dec := frameDecoder(arr)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return errors.New("not an array")
	}
	for i := 0; dec.PeekKind() != ']'; i++ {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := f(i, v); err != nil {
			return err
		}
	}
	return nil
}

// parseFrame splits a text frame into its requests, without copying their
// params: they alias data. batch reports whether the frame was an array. A
// frame that is not JSON yields one -32700 element; an empty or oversized
// array yields one -32600 element.
func parseFrame(data []byte) (items []parsed, batch bool) {
	v, err := readWhole(data)
	if err != nil {
		return []parsed{{err: &WireError{Code: CodeParseError, Message: "parse error: frame is not valid JSON"}}}, false
	}
	if v.Kind() == '[' {
		var elems []jsontext.Value
		_ = Elements(v, func(_ int, e jsontext.Value) error { // v is valid JSON
			if len(elems) <= MaxBatch {
				elems = append(elems, e)
			}
			return nil
		})
		if len(elems) == 0 {
			return []parsed{{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}}}, false
		}
		if len(elems) > MaxBatch {
			n := 0
			_ = Elements(v, func(int, jsontext.Value) error { n++; return nil })
			return []parsed{{err: &WireError{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: batch of %d exceeds %d", n, MaxBatch)}}}, false
		}
		items = make([]parsed, len(elems))
		for i, e := range elems {
			items[i] = parseOne(e)
		}
		return items, true
	}
	return []parsed{parseOne(v)}, false
}

// parseOne parses one request; its params alias data, its id and method
// are copies.
func parseOne(data []byte) parsed {
	if len(data) == 0 || data[0] != '{' {
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: not an object"}}
	}
	var rr rawRequest
	_ = Members(data, func(name string, v jsontext.Value) error { // data is valid JSON
		// Member names match as encoding/json matches them: any case.
		switch {
		case strings.EqualFold(name, "jsonrpc"):
			rr.JSONRPC = v
		case strings.EqualFold(name, "id"):
			rr.ID = v
		case strings.EqualFold(name, "method"):
			rr.Method = v
		case strings.EqualFold(name, "params"):
			rr.Params = v
		}
		return nil
	})
	if len(rr.ID) > MaxIDBytes {
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: id of %d bytes; at most %d", len(rr.ID), MaxIDBytes)}}
	}
	id, ok := validID(bytes.Clone(rr.ID))
	if !ok {
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: id must be a string, a number or null"}}
	}
	bad := func(msg string) parsed {
		if id == nil {
			id = json.RawMessage("null")
		}
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: " + msg}, id: id}
	}
	var version string
	if len(rr.JSONRPC) > 16 || json.Unmarshal(rr.JSONRPC, &version) != nil || version != "2.0" {
		return bad(`jsonrpc must be "2.0"`)
	}
	if len(rr.Method) > 0 && rr.Method[0] == '"' && len(rr.Method) > 6*maxMethodBytes+2 {
		return bad(fmt.Sprintf("method name of %d bytes; no method is longer than %d", len(rr.Method)-2, maxMethodBytes))
	}
	var method string
	if json.Unmarshal(rr.Method, &method) != nil || method == "" {
		return bad("method must be a non-empty string")
	}
	if len(method) > maxMethodBytes {
		return bad(fmt.Sprintf("method name of %d bytes; no method is longer than %d", len(method), maxMethodBytes))
	}
	params := rr.Params
	if len(params) > 0 && params[0] != '{' && params[0] != '[' && !bytes.Equal(params, []byte("null")) {
		return bad("params must be an object or an array")
	}
	return parsed{req: &request{ID: id, Method: method, Params: params}, id: id}
}

// validID returns the id (nil when absent) and whether it has a legal type.
func validID(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, true
	}
	switch raw[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return raw, true
	}
	return nil, false
}

// response is a JSON-RPC response. Exactly one of Result and Error is set;
// Result is always present (null when the handler returned nil).
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *WireError      `json:"error"`
}

// notification is a server-to-client JSON-RPC notification.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

func encodeResult(id json.RawMessage, result any) ([]byte, error) {
	return json.Marshal(response{JSONRPC: "2.0", ID: id, Result: result})
}

func encodeError(id json.RawMessage, we *WireError) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: withData(we)}) // strings, ints: it always marshals
	return b
}

// EncodeNotification encodes a server-to-client notification.
func EncodeNotification(method string, params any) ([]byte, error) {
	return json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
}

// NotificationEnvelope returns the bytes around a notification's params:
// head + params + tail is the frame EncodeNotification makes of params
// already encoded (a JSON value). The backend appends the params of its
// streams (session.event, terminal.output) between them by hand, so that
// an event is encoded once, in one buffer, and the envelope stays the
// transport's.
func NotificationEnvelope(method string) (head, tail []byte) {
	head = append([]byte(`{"jsonrpc":"2.0","method":`), nil...)
	head = appendMethod(head, method)
	head = append(head, `,"params":`...)
	return head, []byte("}")
}

// appendMethod appends a method name as a JSON string; names are plain
// ASCII, anything else goes through encoding/json.
func appendMethod(b []byte, m string) []byte {
	for i := 0; i < len(m); i++ {
		if c := m[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(m) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, m...)
	return append(b, '"')
}
