package engine

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zqagent/sidecar/protocol"
)

// Cards that are safe to render (issue 14). The interactive events carry
// text from the model (a command, a question, a plan, a path). Text that
// holds control characters, ANSI escapes, bidi overrides or invisible
// characters can make a shell show one thing while another runs, and a
// blank that is not a space (U+00A0, U+3164, U+2800) reads as a word break
// on the card but not to bash, so such a field is listed in the event's
// warnings and its display form, with those characters escaped, is in the
// event's display map.

// The warnings are protocol.TextWarning, of the kinds protocol.WarnControl,
// WarnANSI, WarnBidi, WarnInvisible and WarnBlank.

// cardCheck collects the warnings and display forms of one event.
type cardCheck struct {
	warnings []protocol.TextWarning
	display  map[string]string
}

// text checks one string field.
func (c *cardCheck) text(field, s string) {
	kinds := textKinds(s)
	if len(kinds) == 0 {
		return
	}
	for _, k := range kinds {
		c.warnings = append(c.warnings, protocol.TextWarning{Field: field, Kind: k})
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
	var control, ansi, bidi, invisible, blank bool
	for _, r := range s {
		switch {
		case r == 0x1b || r == 0x9b:
			ansi = true
		case r == '\t' || r == '\n':
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == utf8.RuneError:
			control = true
		case isBidi(r):
			bidi = true
		case isBlank(r):
			blank = true
		case isInvisible(r):
			invisible = true
		}
	}
	var out []string
	for _, k := range []struct {
		on   bool
		name string
	}{{control, protocol.WarnControl}, {ansi, protocol.WarnANSI}, {bidi, protocol.WarnBidi}, {invisible, protocol.WarnInvisible}, {blank, protocol.WarnBlank}} {
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
// or data (tag characters and variation selectors carry "smuggled" bytes):
// the default-ignorable code points of Unicode (Other_Default_Ignorable_
// Code_Point and the format characters among them). ZWNJ and ZWJ
// (U+200C/200D) and VS16 (U+FE0F) are left out: Persian and Indic text and
// emoji sequences need them. The Hangul fillers, default-ignorable too, are
// blanks (isBlank is asked first): most fonts draw them as a wide space.
func isInvisible(r rune) bool {
	return r == 0x200b || (r >= 0x2060 && r <= 0x2064) || r == 0xfeff || r == 0x00ad || r == 0x180e ||
		r == 0x034f || (r >= 0xe0000 && r <= 0xe007f) || (r >= 0xfe00 && r <= 0xfe0e) || (r >= 0xe0100 && r <= 0xe01ef) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		(r >= 0x206a && r <= 0x206f) || // deprecated format characters
		(r >= 0xfff9 && r <= 0xfffb) || // interlinear annotation: the text between the anchors may not show
		(r >= 0x1bca0 && r <= 0x1bca3) || // shorthand format controls
		(r >= 0x1d173 && r <= 0x1d17a) // musical format characters
}

// isBlank reports characters a reader takes for a space and a shell does
// not: bash splits words on ASCII space, tab and newline only, so
// `ok<U+00A0>#<U+00A0>; touch x` shows a comment and runs touch. They are
// the space separators (Zs) other than U+0020 — no-break, en, em, thin,
// ideographic spaces, … — and the letters and symbols that look blank: the
// Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the Braille blank
// (U+2800) and the musical null notehead (U+1D159). (U+180E and the
// zero-width spaces are invisible, U+2028/2029 control.)
func isBlank(r rune) bool {
	switch r {
	case ' ':
		return false
	case 0x115f, 0x1160, 0x3164, 0xffa0, 0x2800, 0x1d159:
		return true
	}
	return unicode.Is(unicode.Zs, r)
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

// DisplayText is s as a card shows it: s itself when it holds no character
// a card flags, else its display form (the escaped text of the event's
// display map). Front ends that build their own text from an event's
// fields (the ACP titles) use it.
func DisplayText(s string) string {
	if len(textKinds(s)) == 0 {
		return s
	}
	return escapeText(s)
}
