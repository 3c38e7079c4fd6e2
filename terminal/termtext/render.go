// Package termtext turns a terminal's raw output (a PTY's bytes: escape
// sequences, carriage returns, backspaces) into the plain text a person
// sees on the screen, for the agent: Render draws it line by line and Tail
// keeps its end within bounds. It is the one renderer of the sidecar: the
// PTY terminals (package terminal) and the terminal tools' in-memory
// source (tools/terminaltools) both read through it.
//
// Concurrency: pure functions.
package termtext

import (
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	can = 0x18
	sub = 0x1a
)

// escSeq measures the escape sequence that starts at b[0] (== ESC): its
// length, and for a CSI its parameter bytes and final byte (0 otherwise). A
// sequence cut off by the end of b is consumed to the end.
func escSeq(b []byte) (n int, params []byte, final byte) {
	if len(b) < 2 {
		return len(b), nil, 0
	}
	switch c := b[1]; {
	case c == '[': // CSI: parameters, intermediates, one final byte
		j := 2
		for j < len(b) && b[j] >= 0x30 && b[j] <= 0x3f {
			j++
		}
		p := b[2:j]
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
			j++
		}
		if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
			return j + 1, p, b[j]
		}
		return j, nil, 0 // malformed: drop what was read, keep the odd byte
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC: a string up to BEL (OSC) or ST (ESC \);
		// CAN and SUB cancel it.
		for j := 2; j < len(b); j++ {
			switch b[j] {
			case bel, can, sub:
				return j + 1, nil, 0
			case esc:
				if j+1 < len(b) && b[j+1] == '\\' {
					return j + 2, nil, 0
				}
				return j, nil, 0 // a new sequence starts: the string ended
			}
		}
		return len(b), nil, 0
	case c >= 0x20 && c <= 0x2f: // nF: intermediates then a final byte
		j := 2
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x2f {
			j++
		}
		if j < len(b) && b[j] >= 0x30 && b[j] <= 0x7e {
			return j + 1, nil, 0
		}
		return j, nil, 0
	case c >= 0x30 && c <= 0x7e: // Fp, Fe, Fs: ESC 7, ESC =, ESC M ...
		return 2, nil, 0
	}
	return 1, nil, 0
}

// csiCount is a CSI's single numeric parameter, at least 1 (capped, so that
// no input makes a huge line).
func csiCount(params []byte) int {
	n := 0
	for _, c := range params {
		if c < '0' || c > '9' {
			return 1
		}
		n = min(n*10+int(c-'0'), 1000)
	}
	return max(n, 1)
}

// Render turns terminal output into plain lines the way a terminal shows
// them, line by line: escape sequences are dropped, a carriage return moves
// the cursor to column 0 and later text overwrites what is there ("abc\rX"
// reads "Xbc"; a progress bar shows its last state), backspace moves the
// cursor back one column (it erases nothing), the cursor moves along the
// line (CSI C, D, G), erase-in-line (CSI K) erases, a tab is kept, other
// control characters vanish. Invalid UTF-8 becomes U+FFFD. Trailing blanks
// of each line are trimmed. Cursor moves across lines (CSI A, B, H) and
// screen erases (CSI J) are dropped: the text stays in output order.
func Render(b []byte) string {
	var out strings.Builder
	var line []rune
	col := 0
	put := func(r rune) {
		for len(line) < col {
			line = append(line, ' ')
		}
		if col < len(line) {
			line[col] = r
		} else {
			line = append(line, r)
		}
		col++
	}
	flush := func() {
		out.WriteString(strings.TrimRight(string(line), " \t"))
		line, col = line[:0], 0
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == esc:
			n, params, final := escSeq(b[i:])
			i += n
			switch final {
			case 'C': // cursor forward
				col += csiCount(params)
			case 'D': // cursor back
				col = max(0, col-csiCount(params))
			case 'G': // cursor to column
				col = csiCount(params) - 1
			case 'K':
				switch string(params) {
				case "", "0":
					line = line[:min(col, len(line))]
				case "1":
					for k := 0; k < min(col+1, len(line)); k++ {
						line[k] = ' '
					}
				case "2":
					line = line[:0]
				}
			}
			continue
		case c == '\n':
			flush()
			out.WriteByte('\n')
		case c == '\r':
			col = 0
		case c == '\b':
			col = max(0, col-1)
		case c == '\t':
			put('\t')
		case c < 0x20 || c == 0x7f:
		case c < utf8.RuneSelf:
			put(rune(c))
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r >= 0x80 && r < 0xa0 { // C1 controls
				r = -1
			}
			if r >= 0 {
				put(r)
			}
			i += n
			continue
		}
		i++
	}
	flush()
	return out.String()
}
