package ipc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/media"
)

// turnStartParams are turn.start's params decoded in place: the
// attachments' data URLs alias the request's frame (valid only while the
// handler runs), so that a frame of 4 attachments is never copied whole;
// saveAttachments decodes them straight to their files.
type turnStartParams struct {
	SessionID   string
	Text        string
	Attachments []media.Upload
}

// decodeTurnStart decodes turn.start's params (protocol.TurnStartParams)
// with the rules and errors of decodeParams — a member of the wrong type
// names its path, sessionId is required, names match in any case, the
// last of a repeated member wins — and then checks that there is a text or
// an attachment and that the text is at most backend.MaxTurnText. Nothing large is
// copied: a text over the limit is measured where it lies, a data URL is
// kept as written unless it has escapes (then only it is unescaped).
func decodeTurnStart(raw json.RawMessage) (turnStartParams, error) {
	var p turnStartParams
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return p, fmt.Errorf("%w: params must be an object", wsrpc.ErrInvalidParams)
	}
	var text jsontext.Value
	err := wsrpc.Members(raw, func(name string, v jsontext.Value) error {
		switch {
		case strings.EqualFold(name, "sessionId"):
			return decodeString("sessionId", v, &p.SessionID)
		case strings.EqualFold(name, "text"):
			if err := wrongType("text", "string", v, '"'); err != nil {
				return err
			}
			text = v
		case strings.EqualFold(name, "attachments"):
			atts, err := decodeUploads(v)
			if err != nil {
				return err
			}
			p.Attachments = atts
		}
		return nil
	})
	if err != nil {
		return turnStartParams{}, err
	}
	if p.SessionID == "" {
		return p, &protocol.ParamError{Field: "sessionId", Kind: protocol.KindRequired, Why: "required"}
	}
	textLen := 0
	if text.Kind() == '"' {
		textLen = unquotedLen(text)
	}
	if textLen == 0 && len(p.Attachments) == 0 {
		return p, protocol.InvalidField("text", "required (or attachments)")
	}
	if textLen > backend.MaxTurnText {
		return p, protocol.InvalidField("text", fmt.Sprintf("%d bytes; at most %d (attach large content as a file in the project instead)", textLen, backend.MaxTurnText))
	}
	if textLen > 0 {
		p.Text = string(unquote(text))
	}
	return p, nil
}

// decodeUploads decodes the attachments member: null, or an array of
// objects (a null element is an empty attachment).
func decodeUploads(v jsontext.Value) ([]media.Upload, error) {
	if v.Kind() == 'n' {
		return nil, nil
	}
	if err := wrongType("attachments", "array", v, '['); err != nil {
		return nil, err
	}
	var out []media.Upload
	err := wsrpc.Elements(v, func(_ int, e jsontext.Value) error {
		var u media.Upload
		if e.Kind() != 'n' {
			if err := wrongType("attachments", "object", e, '{'); err != nil {
				return err
			}
			err := wsrpc.Members(e, func(name string, v jsontext.Value) error {
				switch {
				case strings.EqualFold(name, "name"):
					return decodeString("attachments.name", v, &u.Name)
				case strings.EqualFold(name, "mimeType"):
					return decodeString("attachments.mimeType", v, &u.MimeType)
				case strings.EqualFold(name, "dataUrl"):
					if v.Kind() == 'n' {
						return nil
					}
					if err := wrongType("attachments.dataUrl", "string", v, '"'); err != nil {
						return err
					}
					u.DataURL = stringContent(v)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		out = append(out, u)
		return nil
	})
	return out, err
}

// decodeString decodes a string member (null leaves dst as is).
func decodeString(field string, v jsontext.Value, dst *string) error {
	if v.Kind() == 'n' {
		return nil
	}
	if err := wrongType(field, "string", v, '"'); err != nil {
		return err
	}
	*dst = string(unquote(v))
	return nil
}

// wrongType is decodeParams' error for a value of another kind than want
// (null aside): "expected string, got number".
func wrongType(field, expected string, v jsontext.Value, want jsontext.Kind) error {
	k := v.Kind()
	if k == want || k == 'n' {
		return nil
	}
	got := map[jsontext.Kind]string{'"': "string", '0': "number", 't': "bool", 'f': "bool", '{': "object", '[': "array"}[k]
	return &protocol.ParamError{Field: field, Kind: protocol.KindWrongType, Expected: expected, Why: fmt.Sprintf("expected %s, got %s", expected, got)}
}

// unquote decodes a JSON string as encoding/json does (invalid UTF-8 and
// lone surrogates become U+FFFD).
func unquote(v jsontext.Value) []byte {
	b, _ := jsontext.AppendUnquote(nil, v) // v is a valid string: the only error is invalid UTF-8, replaced
	return b
}

// stringContent is a JSON string's content: the bytes between the quotes
// when it has no escape (no copy), else its unquoted copy.
func stringContent(v jsontext.Value) []byte {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	return unquote(v)
}

// unquotedLen is the length of a JSON string once unquoted (as unquote
// would return it), counted without unquoting it.
func unquotedLen(v jsontext.Value) int {
	s := v[1 : len(v)-1]
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && s[i+1] == 'u':
			r := hexRune(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if utf16.DecodeRune(r, hexRune(s[i+2:i+6])) != utf8.RuneError {
						n += 4
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			n += utf8.RuneLen(r)
		case c == '\\':
			n++
			i += 2
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				n += len(string(utf8.RuneError))
			} else {
				n += size
			}
			i += size
		}
	}
	return n
}

// hexRune reads the 4 hex digits of a \u escape (valid JSON).
func hexRune(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}
