package wsrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
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
}

func (r *request) isNotification() bool { return r.ID == nil }

// rawRequest is the wire shape, decoded loosely so that each member can be
// validated with a precise message.
type rawRequest struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// parsed is one element of a frame: a valid request, or the error response to
// send for an invalid one (with the id when it could be read, else null).
type parsed struct {
	req *request
	err *WireError
	id  json.RawMessage
}

// parseFrame splits a text frame into its requests. batch reports whether the
// frame was an array. A frame that is not JSON yields one -32700 element; an
// empty or oversized array yields one -32600 element.
func parseFrame(data []byte) (items []parsed, batch bool) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return []parsed{{err: &WireError{Code: CodeParseError, Message: "parse error: frame is not valid JSON"}}}, false
	}
	if len(data) > 0 && data[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			return []parsed{{err: &WireError{Code: CodeParseError, Message: "parse error: " + err.Error()}}}, false
		}
		if len(elems) == 0 {
			return []parsed{{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}}}, false
		}
		if len(elems) > MaxBatch {
			return []parsed{{err: &WireError{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: batch of %d exceeds %d", len(elems), MaxBatch)}}}, false
		}
		items = make([]parsed, len(elems))
		for i, e := range elems {
			items[i] = parseOne(e)
		}
		return items, true
	}
	return []parsed{parseOne(data)}, false
}

func parseOne(data []byte) parsed {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: not an object"}}
	}
	var rr rawRequest
	if err := json.Unmarshal(data, &rr); err != nil {
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()}}
	}
	if len(bytes.TrimSpace(rr.ID)) > MaxIDBytes {
		return parsed{err: &WireError{Code: CodeInvalidRequest, Message: fmt.Sprintf("invalid request: id of %d bytes; at most %d", len(rr.ID), MaxIDBytes)}}
	}
	id, ok := validID(rr.ID)
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
	if json.Unmarshal(rr.JSONRPC, &version) != nil || version != "2.0" {
		return bad(`jsonrpc must be "2.0"`)
	}
	var method string
	if json.Unmarshal(rr.Method, &method) != nil || method == "" {
		return bad("method must be a non-empty string")
	}
	if len(method) > maxMethodBytes {
		return bad(fmt.Sprintf("method name of %d bytes; no method is longer than %d", len(method), maxMethodBytes))
	}
	params := bytes.TrimSpace(rr.Params)
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
	b, err := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: we})
	if err != nil {
		// Data failed to marshal; drop it rather than the whole error.
		b, _ = json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: &WireError{Code: we.Code, Message: we.Message}})
	}
	return b
}

// EncodeNotification encodes a server-to-client notification.
func EncodeNotification(method string, params any) ([]byte, error) {
	return json.Marshal(notification{JSONRPC: "2.0", Method: method, Params: params})
}
