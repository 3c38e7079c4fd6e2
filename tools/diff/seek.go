package diff

import "strings"

// match levels, tried in order: the exact text, then ignoring trailing
// whitespace, then ignoring leading and trailing whitespace (as Codex's
// seek_sequence does).
var matchLevels = []func(string) string{
	func(s string) string { return s },
	func(s string) string { return strings.TrimRight(s, " \t\r\n") },
	strings.TrimSpace,
}

// seekSequence finds pattern in lines at or after start and returns its
// index, or -1. With eof it first tries the position that ends the pattern
// at the end of the file.
func seekSequence(lines, pattern []string, start int, eof bool) int {
	if len(pattern) == 0 {
		return start
	}
	if len(pattern) > len(lines) {
		return -1
	}
	last := len(lines) - len(pattern)
	for _, norm := range matchLevels {
		if eof && last >= start && matchAt(lines, pattern, last, norm) {
			return last
		}
		for i := max(start, 0); i <= last; i++ {
			if matchAt(lines, pattern, i, norm) {
				return i
			}
		}
	}
	return -1
}

// seekNear finds pattern in lines at or after min, trying positions by
// distance from want: the offset tolerance of apply_unified_diff.
func seekNear(lines, pattern []string, want, min int) int {
	last := len(lines) - len(pattern)
	if last < min {
		return -1
	}
	want = max(min, want)
	want = clampInt(want, min, last)
	for _, norm := range matchLevels {
		for d := 0; ; d++ {
			lo, hi := want-d, want+d
			if lo < min && hi > last {
				break
			}
			if lo >= min && matchAt(lines, pattern, lo, norm) {
				return lo
			}
			if d > 0 && hi <= last && matchAt(lines, pattern, hi, norm) {
				return hi
			}
		}
	}
	return -1
}

func matchAt(lines, pattern []string, at int, norm func(string) string) bool {
	for j, p := range pattern {
		if norm(lines[at+j]) != norm(p) {
			return false
		}
	}
	return true
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// splitLines splits s into lines without their "\n" (a final "\n" does not
// make an extra empty line).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// splitKeep splits s into lines that keep their "\n" (the last one may lack
// it).
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
