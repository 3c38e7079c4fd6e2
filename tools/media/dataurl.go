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
	if len(s) < 5 || !strings.EqualFold(s[:5], "data:") {
		return "", nil, fmt.Errorf("%w: not a data URL", ErrAttachment)
	}
	meta, payload, ok := strings.Cut(s[5:], ",")
	if !ok {
		return "", nil, fmt.Errorf("%w: data URL has no comma", ErrAttachment)
	}
	parts := strings.Split(meta, ";")
	mt := strings.ToLower(strings.TrimSpace(parts[0]))
	if mt != "" && !validType(mt) {
		return "", nil, fmt.Errorf("%w: bad media type %q", ErrAttachment, truncate(parts[0], 64))
	}
	isBase64 := len(parts) > 1 && strings.EqualFold(strings.TrimSpace(parts[len(parts)-1]), "base64")
	if !isBase64 {
		if len(payload) > 3*maxBytes {
			return "", nil, fmt.Errorf("%w: larger than %d bytes", ErrAttachment, maxBytes)
		}
		data, err := url.PathUnescape(payload)
		if err != nil {
			return "", nil, fmt.Errorf("%w: bad percent-encoding: %v", ErrAttachment, err)
		}
		if len(data) > maxBytes {
			return "", nil, fmt.Errorf("%w: larger than %d bytes", ErrAttachment, maxBytes)
		}
		return mt, []byte(data), nil
	}
	payload = stripSpace(payload)
	if base64.RawStdEncoding.DecodedLen(len(strings.TrimRight(payload, "="))) > maxBytes {
		return "", nil, fmt.Errorf("%w: larger than %d bytes", ErrAttachment, maxBytes)
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(payload, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(payload, "=") && len(payload)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	data, err := enc.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("%w: bad base64: %v", ErrAttachment, err)
	}
	return mt, data, nil
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
