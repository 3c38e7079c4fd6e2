package engine

import (
	"fmt"
	"slices"
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
// event's display map. ZWNJ and ZWJ are flagged where they join nothing
// (joins): in what a call runs or touches unless they join emoji, in prose
// unless they join emoji or the letters of a script that uses them.

// The warnings are protocol.TextWarning, of the kinds protocol.WarnControl,
// WarnANSI, WarnBidi, WarnInvisible and WarnBlank.

// cardCheck collects the warnings and display forms of one event.
type cardCheck struct {
	warnings []protocol.TextWarning
	display  map[string]string
}

// text checks one string field a card runs or touches (a command, an
// argument, a path, a name, a URL): a ZWNJ or ZWJ in it is flagged unless
// it joins emoji.
func (c *cardCheck) text(field, s string) { c.check(field, s, false) }

// prose checks a string field a card only shows (a question, its options, a
// plan, a reason, a message): a ZWNJ or ZWJ between two letters of a script
// that joins them (Persian, Indic, …) is not flagged, nor one that joins
// emoji.
func (c *cardCheck) prose(field, s string) { c.check(field, s, true) }

func (c *cardCheck) check(field, s string, prose bool) {
	kinds := textKinds(s, prose)
	if len(kinds) == 0 {
		return
	}
	for _, k := range kinds {
		c.warnings = append(c.warnings, protocol.TextWarning{Field: field, Kind: k})
	}
	if c.display == nil {
		c.display = map[string]string{}
	}
	c.display[field] = escapeText(s, prose)
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
			if len(textKinds(k, false)) > 0 {
				sub = field + "." + escapeText(k, false)
				c.text(sub, k)
			}
			c.value(sub, v[k])
		}
	}
}

// textKinds returns the kinds of unsafe characters s holds, in a fixed
// order; prose as in cardCheck.prose.
func textKinds(s string, prose bool) []string {
	var control, ansi, bidi, invisible, blank bool
	rs := []rune(s)
	for i := range rs {
		switch kindAt(rs, i, prose) {
		case protocol.WarnANSI:
			ansi = true
		case protocol.WarnControl:
			control = true
		case protocol.WarnBidi:
			bidi = true
		case protocol.WarnBlank:
			blank = true
		case protocol.WarnInvisible:
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

// kindAt is the kind of warning rs[i] raises, "" when none.
func kindAt(rs []rune, i int, prose bool) string {
	r := rs[i]
	switch {
	case r == 0x1b || r == 0x9b:
		return protocol.WarnANSI
	case r == '\t' || r == '\n':
	case r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == utf8.RuneError:
		return protocol.WarnControl
	case isBidi(r):
		return protocol.WarnBidi
	case isBlank(r):
		return protocol.WarnBlank
	case isInvisible(r):
		return protocol.WarnInvisible
	case (r == zwnj || r == zwj) && !joins(rs, i, prose):
		return protocol.WarnInvisible
	}
	return ""
}

const (
	zwnj = 0x200c
	zwj  = 0x200d
)

// joins reports whether the ZWNJ or ZWJ at rs[i] does what it is for, so
// that it is not flagged: a ZWJ between two emoji (a family, a flag, a
// profession: the sequence then shows as one picture, not two), or, in
// prose, either between two letters or marks of a script that uses them
// (Persian "می‌خواهم", Indic conjuncts) — not Latin, Greek, Cyrillic or
// the common characters, where it would only split a word unseen. Anywhere
// else it shows as nothing, so `rm foo<U+200C>bar` reads as `rm foobar`.
func joins(rs []rune, i int, prose bool) bool {
	if i == 0 || i == len(rs)-1 {
		return false
	}
	prev, next := rs[i-1], rs[i+1]
	if rs[i] == zwj {
		j := i - 1
		for j > 0 && (rs[j] == 0xfe0f || (rs[j] >= 0x1f3fb && rs[j] <= 0x1f3ff)) { // VS16, skin tones
			j--
		}
		if unicode.Is(unicode.So, rs[j]) && unicode.Is(unicode.So, next) {
			return true
		}
	}
	return prose && joiningLetter(prev) && joiningLetter(next)
}

// joiningLetter reports a letter or mark of a script where ZWNJ and ZWJ
// shape text.
func joiningLetter(r rune) bool {
	return r > unicode.MaxASCII && unicode.In(r, unicode.L, unicode.M) &&
		!unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Common)
}

func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// isInvisible reports characters that render as nothing and can hide text
// or data (tag characters and variation selectors carry "smuggled" bytes):
// the default-ignorable code points of Unicode (Other_Default_Ignorable_
// Code_Point and the format characters among them). ZWNJ and ZWJ
// (U+200C/200D) and VS16 (U+FE0F) are left out: Persian and Indic text and
// emoji sequences need them (kindAt flags ZWNJ and ZWJ where they do not
// join anything, see joins). The Hangul fillers, default-ignorable too, are
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
func escapeText(s string, prose bool) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case kindAt(rs, i, prose) == "":
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

// DisplayText is s as a card shows a field it runs or touches (a command,
// a path, an argument): s itself when it holds no character a card flags,
// else its display form (the escaped text of the event's display map).
// Front ends that build their own text from an event's fields (the ACP
// titles) use it.
func DisplayText(s string) string {
	if len(textKinds(s, false)) == 0 {
		return s
	}
	return escapeText(s, false)
}

// DisplayProse is DisplayText for text a card only shows (a question, a
// plan, a reason, a session's name): a ZWNJ or ZWJ that joins letters of a
// script that uses them stays.
func DisplayProse(s string) string {
	if len(textKinds(s, true)) == 0 {
		return s
	}
	return escapeText(s, true)
}

// DisplayTexts is DisplayText of several texts shown side by side (the old
// and new text of a diff): all escaped when one is, so that text only one
// of them flags does not show as a change of every backslash.
func DisplayTexts(ss ...string) []string {
	out := slices.Clone(ss)
	for _, s := range ss {
		if len(textKinds(s, false)) > 0 {
			for i, s := range ss {
				out[i] = escapeText(s, false)
			}
			break
		}
	}
	return out
}
