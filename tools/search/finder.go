package search

import (
	"bytes"
	"regexp/syntax"
	"strings"
)

// finder finds a literal by jumping between occurrences of its rarest byte
// with IndexByte (vectorized) and comparing the window around each; bytes.Index
// jumps by the first byte, which in source code is often a common letter.
// A fold finder matches ASCII case-insensitively: it looks for the rare byte
// in both cases.
type finder struct {
	lit    []byte // lower case when fold
	fold   bool
	rare   int  // index in lit of the byte searched for
	lo, up byte // that byte in both cases (equal when not fold or not a letter)
}

// commonBytes lists bytes by how often they occur in source code and prose,
// most frequent first; bytes not listed count as rare.
const commonBytes = " etaoinsrlcdhupmfg.()\"=,_ybw;:{}\tkvx0-1/*2jq'#<>[]3&|+$"

func byteRank(c byte) int {
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	if i := strings.IndexByte(commonBytes, c); i >= 0 {
		return len(commonBytes) - i
	}
	return 0
}

// newFinder returns a finder for lit (non-empty); fold makes it
// case-insensitive for ASCII letters.
func newFinder(lit string, fold bool) *finder {
	f := &finder{lit: []byte(lit), fold: fold}
	if fold {
		f.lit = []byte(strings.ToLower(lit))
	}
	best := 1 << 30
	for i, c := range f.lit {
		r := byteRank(c)
		if !fold && c >= 'A' && c <= 'Z' {
			r /= 3 // an exact capital is rarer than the letter in either case
		}
		if r < best {
			best, f.rare = r, i
		}
	}
	c := f.lit[f.rare]
	f.lo, f.up = c, c
	if fold && c >= 'a' && c <= 'z' {
		f.up = c - ('a' - 'A')
	}
	return f
}

// index returns the first position of the literal in data, or -1.
func (f *finder) index(data []byte) int {
	n := len(f.lit)
	nextLo, nextUp := -2, -2 // -2: not searched yet; -1: none left
	for pos := f.rare; pos <= len(data)-n+f.rare; {
		if nextLo != -1 && nextLo < pos {
			nextLo = indexFrom(data, f.lo, pos)
		}
		if f.up == f.lo {
			nextUp = nextLo
		} else if nextUp != -1 && nextUp < pos {
			nextUp = indexFrom(data, f.up, pos)
		}
		p := nextLo
		if p < 0 || (nextUp >= 0 && nextUp < p) {
			p = nextUp
		}
		if p < 0 {
			return -1
		}
		start := p - f.rare
		if start+n <= len(data) && f.equal(data[start:start+n]) {
			return start
		}
		pos = p + 1
	}
	return -1
}

func indexFrom(data []byte, c byte, from int) int {
	if from >= len(data) {
		return -1
	}
	i := bytes.IndexByte(data[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

func (f *finder) equal(b []byte) bool {
	if !f.fold {
		return bytes.Equal(b, f.lit)
	}
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != f.lit[i] {
			return false
		}
	}
	return true
}

// requiredFoldLiteral returns the longest ASCII literal every match of re
// contains, compared case-insensitively. Letters whose case folding reaches
// outside ASCII (k: the Kelvin sign, s: the long s) and non-ASCII runes end
// a literal, so that the prefilter never misses a line the regexp matches.
func requiredFoldLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		return longestFoldRun(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredFoldLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredFoldLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		var run []rune
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				run = append(run, sub.Rune...)
				continue
			}
			best = longer(best, longestFoldRun(run))
			run = nil
			best = longer(best, requiredFoldLiteral(sub))
		}
		return longer(best, longestFoldRun(run))
	}
	return ""
}

func longestFoldRun(rs []rune) string {
	best, cur := "", []byte(nil)
	for _, r := range rs {
		if r >= 0x80 || r == 'k' || r == 'K' || r == 's' || r == 'S' {
			best = longer(best, string(cur))
			cur = cur[:0]
			continue
		}
		cur = append(cur, byte(r))
	}
	return longer(best, string(cur))
}
