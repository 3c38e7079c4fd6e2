package media

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// ParseDataURL splits a data URL (data:<mime>[;param]*[;base64],<payload>)
// into its media type (lowercased, without parameters; "" when absent) and
// decoded bytes. Payloads that would decode to more than maxBytes are refused
// before decoding. Base64 in the standard or URL alphabet, padded or not,
// with embedded whitespace, is accepted; so is a percent-encoded payload.
func ParseDataURL(s string, maxBytes int) (string, []byte, error) {
	mt, isBase64, payload, err := splitDataURL(s)
	if err != nil {
		return "", nil, err
	}
	if !isBase64 {
		data, err := unescapePayload(payload, maxBytes)
		return mt, data, err
	}
	payload = stripSpace(payload)
	enc, err := payloadEncoding(payload, maxBytes)
	if err != nil {
		return "", nil, err
	}
	data, err := enc.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("%w: bad base64: %v", ErrAttachment, err)
	}
	return mt, data, nil
}

// splitDataURL splits data:<mime>[;param]*[;base64],<payload> into its
// media type (lowercased, without parameters; "" when absent), whether the
// payload is base64, and the payload (a part of s).
func splitDataURL[T ~string | ~[]byte](s T) (mt string, isBase64 bool, payload T, err error) {
	if len(s) < 5 || !strings.EqualFold(string(s[:5]), "data:") {
		return "", false, payload, fmt.Errorf("%w: not a data URL", ErrAttachment)
	}
	comma := -1
	for i := 5; i < len(s); i++ {
		if s[i] == ',' {
			comma = i
			break
		}
	}
	if comma < 0 {
		return "", false, payload, fmt.Errorf("%w: data URL has no comma", ErrAttachment)
	}
	parts := strings.Split(string(s[5:comma]), ";")
	mt = strings.ToLower(strings.TrimSpace(parts[0]))
	if mt != "" && !validType(mt) {
		return "", false, payload, fmt.Errorf("%w: bad media type %q", ErrAttachment, truncate(parts[0], 64))
	}
	isBase64 = len(parts) > 1 && strings.EqualFold(strings.TrimSpace(parts[len(parts)-1]), "base64")
	return mt, isBase64, s[comma+1:], nil
}

// unescapePayload decodes a percent-encoded payload of at most maxBytes.
func unescapePayload[T ~string | ~[]byte](payload T, maxBytes int) ([]byte, error) {
	if len(payload) > 3*maxBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrAttachment, maxBytes)
	}
	data, err := url.PathUnescape(string(payload))
	if err != nil {
		return nil, fmt.Errorf("%w: bad percent-encoding: %v", ErrAttachment, err)
	}
	if len(data) > maxBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrAttachment, maxBytes)
	}
	return []byte(data), nil
}

// payloadEncoding is the base64 encoding of a payload without whitespace
// (standard or URL alphabet, padded or not); a payload that would decode
// to more than maxBytes is refused.
func payloadEncoding[T ~string | ~[]byte](payload T, maxBytes int) (*base64.Encoding, error) {
	end := len(payload)
	for end > 0 && payload[end-1] == '=' {
		end--
	}
	if base64.RawStdEncoding.DecodedLen(end) > maxBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrAttachment, maxBytes)
	}
	enc := base64.StdEncoding
	for i := range len(payload) {
		if payload[i] == '-' || payload[i] == '_' {
			enc = base64.URLEncoding
			break
		}
	}
	if end == len(payload) && len(payload)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	return enc, nil
}

// EncodeDataURL returns data:<mt>;base64,<payload>.
func EncodeDataURL(mt string, data []byte) string {
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(mt) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(mt)
	b.WriteString(";base64,")
	b.WriteString(base64.StdEncoding.EncodeToString(data))
	return b.String()
}

// validType checks "type/subtype" made of RFC 6838 name characters.
func validType(mt string) bool {
	typ, sub, ok := strings.Cut(mt, "/")
	return ok && validName(typ) && validName(sub)
}

func validName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.ContainsRune("!#$&-^_.+", c):
		default:
			return false
		}
	}
	return true
}

func stripSpace(s string) string {
	if !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
