// Package textdiff renders small unified diffs between two texts, for the
// previews the file tools return to the model and the approval cards. The
// line diff is github.com/aymanbagabas/go-udiff (gopls' Myers diff, bounded
// for large rewrites); this package only renders it: every hunk header
// with both counts, no "\ No newline at end of file" lines (a missing last
// newline is not a change here), and a cut after maxLines lines.
//
// Concurrency: pure functions.
package textdiff

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

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

// endLine ends a non-empty text with a newline: the diffs compare lines,
// and a last line without one is the same line.
func endLine(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func unified(from, to, old, new string, ctx, maxLines int) string {
	old, new = endLine(old), endLine(new)
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	u, err := udiff.ToUnifiedDiff(from, to, old, udiff.Lines(old, new), ctx)
	if err != nil { // udiff's own edits of old: not expected
		b.WriteString("... (no diff: " + err.Error() + ")\n")
		return b.String()
	}
	lines := 2
	put := func(l string) bool {
		if maxLines > 0 && lines >= maxLines {
			b.WriteString("... (diff truncated)\n")
			return false
		}
		b.WriteString(l)
		b.WriteByte('\n')
		lines++
		return true
	}
	for _, h := range u.Hunks {
		var oc, nc int
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				oc++
			}
			if l.Kind != udiff.Delete {
				nc++
			}
		}
		// An empty side names the line before it, as diff -u does.
		os, ns := h.FromLine, h.ToLine
		if oc == 0 {
			os--
		}
		if nc == 0 {
			ns--
		}
		if !put(fmt.Sprintf("@@ -%d,%d +%d,%d @@", os, oc, ns, nc)) {
			return b.String()
		}
		for _, l := range h.Lines {
			mark := " "
			switch l.Kind {
			case udiff.Delete:
				mark = "-"
			case udiff.Insert:
				mark = "+"
			}
			if !put(mark + strings.TrimSuffix(l.Content, "\n")) {
				return b.String()
			}
		}
	}
	return b.String()
}

// Count returns the numbers of added and removed lines between old and new.
func Count(old, new string) (added, removed int) {
	old, new = endLine(old), endLine(new)
	for _, e := range udiff.Lines(old, new) {
		removed += strings.Count(old[e.Start:e.End], "\n")
		added += strings.Count(e.New, "\n")
	}
	return added, removed
}
