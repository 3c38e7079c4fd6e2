package terminal

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStripANSI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[1;38;5;208mbold orange\x1b[m!", "bold orange!"},
		{"\x1b]0;window title\x07prompt$ ", "prompt$ "},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b[?2004hbracketed\x1b[?2004l", "bracketed"},
		{"\x1b(Bcharset\x1b=\x1b>", "charset"},
		{"\x1bPdcs data\x1b\\after", "after"},
		{"cut at end \x1b[38;5", "cut at end "},
		{"lone esc\x1b", "lone esc"},
		{"a\r\nb\tc", "a\r\nb\tc"},
		{"\x1b[31\x01m", "\x01m"}, // malformed CSI: the odd byte is kept
	} {
		if got := string(stripANSI([]byte(tc.in))); got != tc.want {
			t.Errorf("stripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[31mred\x1b[0m\r\n", "red\n"},
		{"progress 10%\rprogress 100%\r\ndone", "progress 100%\ndone"},
		{"abc\b\bX\r\n", "aXc\n"},
		{"typo\b \b\b \bed\r\n", "tyed\n"},
		{"long line\r\x1b[Kshort\r\n", "short\n"},
		{"abcdef\r\x1b[2K\r\n", "\n"},
		{"abcdef\x1b[3D\x1b[1K|\r\n", "   |ef\n"},
		{"ab\x1b[5Gc\x1b[Cd\r\n", "ab  c d\n"},
		{"trailing   \r\n", "trailing\n"},
		{"bell\x07 and \x00nul", "bell and nul"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"c1 \u0085 gone", "c1  gone"},
	} {
		if got := renderText([]byte(tc.in)); got != tc.want {
			t.Errorf("renderText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	text := "l1\nl2\nl3\nl4\n"
	for _, tc := range []struct {
		lines, bytes int
		want         string
	}{
		{2, 0, "l3\nl4"},
		{10, 0, "l1\nl2\nl3\nl4"},
		{4, 0, "l1\nl2\nl3\nl4"},
		{0, 0, "l1\nl2\nl3\nl4"},
		{10, 5, "l4"},     // cut at a line boundary
		{10, 6, "l3\nl4"}, // exactly fits
		{10, 1, "4"},      // no line fits: cut inside the line
		{1, 100, "l4"},
	} {
		if got := lastLines(text, tc.lines, tc.bytes); got != tc.want {
			t.Errorf("lastLines(%d, %d) = %q, want %q", tc.lines, tc.bytes, got, tc.want)
		}
	}
	if got := lastLines("ééé", 1, 3); got != "é" {
		t.Errorf("rune cut = %q", got)
	}
}

func FuzzStripANSI(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[0m", "\x1b]0;t\x07x", "\x1bP\x1b\\", "a\x1b", "\x1b[", "\x1b(", "\x1b]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := stripANSI(b)
		if len(out) > len(b) {
			t.Fatalf("output longer than input")
		}
		if bytes.IndexByte(out, esc) >= 0 {
			t.Fatalf("ESC left in %q", out)
		}
		// Text without escapes is kept as is.
		if bytes.IndexByte(b, esc) < 0 && !bytes.Equal(out, b) {
			t.Fatalf("plain text changed")
		}
	})
}

func FuzzRenderText(f *testing.F) {
	for _, s := range []string{"a\rb\r\nc", "x\b\by", "\x1b[2Kz", "\x1b[1K", "\xff\xfe", "\t\x1b]8;;u\x1b\\"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := renderText(b)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 %q", out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("control %U left in %q", r, out)
			}
		}
		if got, want := strings.Count(out, "\n"), bytes.Count(b, []byte("\n")); got > want {
			t.Fatalf("%d lines from %d newlines", got, want)
		}
		_ = lastLines(out, 3, 10)
	})
}
