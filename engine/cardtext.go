package engine

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Cards that are safe to render (issue 14). The interactive events carry
// text from the model (a command, a question, a plan, a path). Text that
// holds control characters, ANSI escapes, bidi overrides or invisible
// characters can make a shell show one thing while another runs, so such
// a field is listed in the event's warnings and its display form, with
// those characters escaped, is in the event's display map.

// Kinds of TextWarning.
const (
	WarnControl   = "control"   // C0/C1 control characters other than tab and newline, line separators
	WarnANSI      = "ansi"      // an escape sequence (ESC or CSI)
	WarnBidi      = "bidi"      // bidirectional overrides, embeddings, isolates and marks
	WarnInvisible = "invisible" // zero-width and other invisible characters
)

// TextWarning marks one field of an interactive event whose text must not be
// rendered as is.
type TextWarning struct {
	// Field is the field's path in the event's data: "question",
	// "options[1]", "arguments.command", "arguments.todos[0].content".
	Field string `json:"field"`
	Kind  string `json:"kind"` // control | ansi | bidi | invisible
}

// cardCheck collects the warnings and display forms of one event.
type cardCheck struct {
	warnings []TextWarning
	display  map[string]string
}

// text checks one string field.
func (c *cardCheck) text(field, s string) {
	kinds := textKinds(s)
	if len(kinds) == 0 {
		return
	}
	for _, k := range kinds {
		c.warnings = append(c.warnings, TextWarning{Field: field, Kind: k})
	}
	if c.display == nil {
		c.display = map[string]string{}
	}
	c.display[field] = escapeText(s)
}

// value checks a decoded JSON value (tool arguments), keys included, in
// key order.
func (c *cardCheck) value(field string, v any) {
	switch v := v.(type) {
	case string:
		c.text(field, v)
	case []any:
		for i, x := range v {
			c.value(fmt.Sprintf("%s[%d]", field, i), x)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := field + "." + k
			if len(textKinds(k)) > 0 {
				sub = field + "." + escapeText(k)
				c.text(sub, k)
			}
			c.value(sub, v[k])
		}
	}
}

// textKinds returns the kinds of unsafe characters s holds, in a fixed
// order.
func textKinds(s string) []string {
	var control, ansi, bidi, invisible bool
	for _, r := range s {
		switch {
		case r == 0x1b || r == 0x9b:
			ansi = true
		case r == '\t' || r == '\n':
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == utf8.RuneError:
			control = true
		case isBidi(r):
			bidi = true
		case isInvisible(r):
			invisible = true
		}
	}
	var out []string
	for _, k := range []struct {
		on   bool
		name string
	}{{control, WarnControl}, {ansi, WarnANSI}, {bidi, WarnBidi}, {invisible, WarnInvisible}} {
		if k.on {
			out = append(out, k.name)
		}
	}
	return out
}

func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// isInvisible reports characters that render as nothing and can hide text
// or data (tag characters and variation selectors carry "smuggled" bytes).
// ZWNJ and ZWJ (U+200C/200D) and VS16 (U+FE0F) are left out: Persian and
// Indic text and emoji sequences need them.
func isInvisible(r rune) bool {
	return r == 0x200b || (r >= 0x2060 && r <= 0x2064) || r == 0xfeff || r == 0x00ad || r == 0x180e ||
		r == 0x034f || (r >= 0xe0000 && r <= 0xe007f) || (r >= 0xfe00 && r <= 0xfe0e) || (r >= 0xe0100 && r <= 0xe01ef)
}

// escapeText returns s with every unsafe character written as an escape
// (\x1b, \u202e, \U000e0041) and backslashes doubled, so the display form
// cannot be confused with the text it escapes.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case len(textKinds(string(r))) == 0:
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}
