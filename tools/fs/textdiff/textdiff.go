// Package textdiff renders small unified diffs between two texts, for the
// previews the file tools return to the model. It trims the common prefix
// and suffix and runs an LCS on what is left, so it is exact for the edits
// tools make and bounded for large rewrites (which show as one hunk).
//
// Concurrency: pure functions.
package textdiff

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxCells bounds the LCS table; larger middles are shown as a replacement.
const maxCells = 1 << 20

type op struct {
	kind byte // ' ', '-', '+'
	text string
}

// Lines splits s into lines without their "\n".
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// Unified returns a unified diff of old and new named name with ctx lines of
// context, at most maxLines lines long (0 means no limit); "" when equal.
func Unified(name, old, new string, ctx, maxLines int) string {
	if old == new {
		return ""
	}
	return unified("a/"+name, "b/"+name, old, new, ctx, maxLines)
}

// ReviewContext is the context lines of Change.
const ReviewContext = 3

// Change renders one file's change for a review (an approval card): a
// unified diff with ReviewContext lines of context, whose "---" line is
// /dev/null for a file that did not exist and "+++" line /dev/null for a
// file removed; one "Binary files … differ" line when either side holds a
// NUL byte or is not UTF-8; "" when nothing changes.
func Change(name string, old, new []byte, existed, exists bool) string {
	if existed == exists && string(old) == string(new) {
		return ""
	}
	from, to := "a/"+name, "b/"+name
	if !existed {
		from = "/dev/null"
	}
	if !exists {
		to = "/dev/null"
	}
	if binary(old) || binary(new) {
		return fmt.Sprintf("Binary files %s and %s differ\n", from, to)
	}
	return unified(from, to, string(old), string(new), ReviewContext, 0)
}

func binary(b []byte) bool {
	return strings.IndexByte(string(b), 0) >= 0 || !utf8.Valid(b)
}

func unified(from, to, old, new string, ctx, maxLines int) string {
	ops := diff(Lines(old), Lines(new))
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	lines := 2
	for _, h := range hunks(ops, ctx) {
		for _, l := range h {
			if maxLines > 0 && lines >= maxLines {
				b.WriteString("... (diff truncated)\n")
				return b.String()
			}
			b.WriteString(l)
			b.WriteByte('\n')
			lines++
		}
	}
	return b.String()
}

// Count returns the numbers of added and removed lines between old and new.
func Count(old, new string) (added, removed int) {
	for _, o := range diff(Lines(old), Lines(new)) {
		switch o.kind {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}

func diff(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]op, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		out = append(out, op{' ', l})
	}
	out = append(out, middle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, op{' ', l})
	}
	return out
}

func middle(a, b []string) []op {
	var out []op
	if len(a)*len(b) > maxCells || len(a) == 0 || len(b) == 0 {
		for _, l := range a {
			out = append(out, op{'-', l})
		}
		for _, l := range b {
			out = append(out, op{'+', l})
		}
		return out
	}
	// lcs[i][j] = LCS length of a[i:], b[j:]
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, op{' ', a[i]})
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, op{'-', a[i]})
			i++
		default:
			out = append(out, op{'+', b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, op{'-', a[i]})
	}
	for ; j < len(b); j++ {
		out = append(out, op{'+', b[j]})
	}
	return out
}

// hunks groups ops into unified hunks (header line first).
func hunks(ops []op, ctx int) [][]string {
	var out [][]string
	n := len(ops)
	i := 0
	// old/new line numbers (1-based) of ops[k]
	oldAt := make([]int, n+1)
	newAt := make([]int, n+1)
	o, nw := 1, 1
	for k, x := range ops {
		oldAt[k], newAt[k] = o, nw
		if x.kind != '+' {
			o++
		}
		if x.kind != '-' {
			nw++
		}
	}
	oldAt[n], newAt[n] = o, nw
	for i < n {
		for i < n && ops[i].kind == ' ' {
			i++
		}
		if i == n {
			break
		}
		start := max(i-ctx, 0)
		end := i
		for {
			for end < n && ops[end].kind != ' ' {
				end++
			}
			// extend over context while another change follows within 2*ctx
			k := end
			for k < n && ops[k].kind == ' ' && k-end < 2*ctx {
				k++
			}
			if k < n && ops[k].kind != ' ' {
				end = k
				continue
			}
			end = min(end+ctx, n)
			break
		}
		var oc, nc int
		body := make([]string, 0, end-start+1)
		for _, x := range ops[start:end] {
			if x.kind != '+' {
				oc++
			}
			if x.kind != '-' {
				nc++
			}
			body = append(body, string(x.kind)+x.text)
		}
		os, ns := oldAt[start], newAt[start]
		if oc == 0 {
			os--
		}
		if nc == 0 {
			ns--
		}
		hdr := fmt.Sprintf("@@ -%d,%d +%d,%d @@", os, oc, ns, nc)
		out = append(out, append([]string{hdr}, body...))
		i = end
	}
	return out
}
