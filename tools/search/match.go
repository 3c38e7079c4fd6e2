package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// matcher finds the lines of a buffer that a Go regular expression matches.
// It never runs the regexp over text that cannot match: a literal every match
// contains is located with bytes.Index first, or, without one, the pattern
// compiled in multi-line mode locates the first candidate in the rest of the
// buffer. Only the line around a candidate is checked with the line regexp.
type matcher struct {
	re       *regexp.Regexp // matches one line (without its '\n')
	buf      *regexp.Regexp // (?m) variant over the whole buffer; nil when \A or \z make it differ
	lit      *finder        // a literal every match contains (maybe case-insensitive); nil when none
	complete bool           // the pattern is exactly lit: a line holding lit matches
}

// newMatcher compiles pattern (RE2 syntax, as Go's regexp).
func newMatcher(pattern string, ignoreCase bool) (*matcher, error) {
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	parsed = parsed.Simplify()
	m := &matcher{re: re}
	if lit, ok := wholeLiteral(parsed); ok {
		// A literal spanning lines matches no line; the line check says so.
		m.lit, m.complete = newFinder(lit, false), !strings.Contains(lit, "\n")
		return m, nil
	}
	if lit := requiredLiteral(parsed); lit != "" {
		m.lit = newFinder(lit, false)
	} else if lit := requiredFoldLiteral(parsed); len(lit) >= 2 {
		m.lit = newFinder(lit, true)
	}
	if !hasTextAnchor(parsed) {
		m.buf, err = regexp.Compile("(?m)" + pattern)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
		}
	}
	return m, nil
}

// wholeLiteral reports whether re is exactly a case-sensitive literal
// (regexp's LiteralPrefix also says "complete" for ^lit$, which is not).
func wholeLiteral(re *syntax.Regexp) (string, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 && len(re.Rune) > 0 {
		return string(re.Rune), true
	}
	return "", false
}

// requiredLiteral returns the longest case-sensitive literal that every match
// of re contains, or "".
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, run := "", ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run += string(sub.Rune)
				continue
			}
			best = longer(best, run)
			run = ""
			best = longer(best, requiredLiteral(sub))
		}
		return longer(best, run)
	}
	return ""
}

func longer(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

// hasTextAnchor reports whether re uses \A or \z, which mean "start/end of
// line" for the line regexp but "start/end of buffer" for the (?m) one.
func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, s := range re.Sub {
		if hasTextAnchor(s) {
			return true
		}
	}
	return false
}

// scan calls hit for each matching line of data, in order, with its 1-based
// number and its bounds (without the '\n'), until hit returns false.
func (m *matcher) scan(data []byte, hit func(lineNo, start, end int) bool) {
	pos, line, counted := 0, 1, 0
	for pos < len(data) {
		cand := pos
		switch {
		case m.lit != nil:
			i := m.lit.index(data[pos:])
			if i < 0 {
				return
			}
			cand = pos + i
		case m.buf != nil:
			loc := m.buf.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			cand = pos + loc[0]
		}
		start := pos + bytes.LastIndexByte(data[pos:cand], '\n') + 1
		end := bytes.IndexByte(data[cand:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += cand
		}
		line += bytes.Count(data[counted:start], []byte{'\n'})
		counted = start
		if m.complete || m.re.Match(data[start:end]) {
			if !hit(line, start, end) {
				return
			}
		}
		pos = end + 1
	}
}

// isBinary reports whether data looks binary: a NUL byte in its first 8 KB
// (git's and ripgrep's rule).
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0
}

// clipLine shortens a long line to max bytes (on a rune boundary) with a note.
func clipLine(b []byte, max int) string {
	if len(b) <= max {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [%d more bytes]", bytes.ToValidUTF8(b[:cut], []byte("\uFFFD")), len(b)-cut)
}
