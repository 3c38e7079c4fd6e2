package terminaltools

import "unicode/utf8"

// StripANSI turns raw terminal output into plain text. It removes CSI
// sequences (ESC [ … final byte), OSC sequences (ESC ] … BEL or ESC \), DCS,
// SOS, PM and APC strings (up to ESC \), charset selections (ESC ( B and
// friends) and other two-byte escapes, and C0 control characters other
// than tab and newline. CRLF becomes LF. A carriage return inside a line
// (progress bars, spinners) makes the text that follows replace the line,
// so each line keeps its last non-empty rewrite. A backspace removes the
// character before it. Bytes that are not valid UTF-8 are kept as they are.
// The output is never longer than the input, and StripANSI is idempotent.
func StripANSI(b []byte) []byte {
	out := make([]byte, 0, len(b))
	lineStart := 0     // index in out where the current line starts
	pendingCR := false // a lone CR was seen: the next text rewrites the line
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0x1b:
			i = skipEscape(b, i)
			continue
		case c == '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++ // CRLF: handled as LF below
				continue
			}
			pendingCR = true
		case c == '\n':
			out = append(out, '\n')
			lineStart = len(out)
			pendingCR = false
		case c == '\b':
			if pendingCR {
				break // the cursor is at column 0
			}
			if len(out) > lineStart {
				_, size := utf8.DecodeLastRune(out[lineStart:])
				out = out[:len(out)-size]
			}
		case c == '\t' || c >= 0x20 && c != 0x7f:
			if pendingCR {
				out = out[:lineStart]
				pendingCR = false
			}
			out = append(out, c)
		}
		i++
	}
	return out
}

// skipEscape returns the index just past the escape sequence starting at
// b[i] == ESC. An unfinished sequence at the end of b is dropped.
func skipEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return len(b)
	}
	switch n := b[i+1]; n {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40–0x7E
		j := i + 2
		for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
			if b[j] == 0x1b || b[j] == '\n' {
				return j // broken sequence: resume at the ESC or newline
			}
			j++
		}
		return min(j+1, len(b))
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: strings up to ST
		j := i + 2
		for j < len(b) {
			switch {
			case b[j] == 0x07 && n == ']':
				return j + 1
			case b[j] == 0x1b:
				if j+1 < len(b) && b[j+1] == '\\' {
					return j + 2
				}
				return j // a new escape ends the string
			}
			j++
		}
		return len(b)
	case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ': // charset and other three-byte escapes
		return min(i+3, len(b))
	default: // ESC 7, ESC 8, ESC =, ESC >, ESC M, ESC c, ...
		return i + 2
	}
}
