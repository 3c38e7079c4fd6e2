package termtext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRender pins what the agent reads of a terminal: what the screen
// shows. A carriage return moves the cursor to column 0 and overwrites
// ("abc\rX" reads "Xbc"); a backspace moves back without erasing.
func TestRender(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "plain text\n", "plain text\n"},
		{"carriage return overwrites", "abc\rX", "Xbc"},
		{"progress bar", "progress 10%\rprogress 55%\rprogress 100%\n", "progress 100%\n"},
		{"CRLF", "line1\r\nline2\r\n", "line1\nline2\n"},
		{"lone CR at the end", "spinner |\r", "spinner |"},
		{"backspace moves back", "abc\b\bX\r\n", "aXc\n"},
		{"backspace erase idiom", "typo\b \b\b \bed\r\n", "tyed\n"},
		{"backspace at column 0", "over\rX\b\bY", "Yver"},
		{"backspace over a wide rune", "héllo\bo", "héllo"},
		{"CR then erase to end of line", "downloading...\r\x1b[Kdone\n", "done\n"},
		{"erase to end (0K)", "long line\r\x1b[0Kshort\r\n", "short\n"},
		{"erase whole line (2K)", "abcdef\r\x1b[2K\r\n", "\n"},
		{"erase to start (1K)", "abcdef\x1b[3D\x1b[1K|\r\n", "   |ef\n"},
		{"cursor to column and forward", "ab\x1b[5Gc\x1b[Cd\r\n", "ab  c d\n"},
		{"cursor back", "abcd\x1b[2DX", "abXd"},
		{"SGR", "\x1b[31mred\x1b[0m normal", "red normal"},
		{"SGR 256", "\x1b[1;38;5;208mbold orange\x1b[m!", "bold orange!"},
		{"private modes and screen", "\x1b[?25l\x1b[2J\x1b[Hscreen\x1b[?25h", "screen"},
		{"bracketed paste", "\x1b[?2004hbracketed\x1b[?2004l", "bracketed"},
		{"OSC title with BEL", "\x1b]0;window title\x07prompt$ x", "prompt$ x"},
		{"OSC 8 link with ST", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"OSC cut off", "osc no end \x1b]0;title", "osc no end"},
		{"DCS", "\x1bP1$r0m\x1b\\after dcs", "after dcs"},
		{"charset and keypad", "\x1b(Bascii\x1b)0\x1b=\x1b>", "ascii"},
		{"save and restore cursor", "\x1b7saved\x1b8", "saved"},
		{"CSI cut off", "unfinished \x1b[31", "unfinished"},
		{"CSI broken by a newline", "broken \x1b[12\nnext", "broken\nnext"},
		{"lone ESC", "trailing esc \x1b", "trailing esc"},
		{"controls vanish", "bell\x07 nul\x00 del\x7f!", "bell nul del!"},
		{"tab kept", "tab\tkept", "tab\tkept"},
		{"trailing blanks trimmed", "trailing   \r\n", "trailing\n"},
		{"invalid UTF-8", "bad \xff utf8", "bad \uFFFD utf8"},
		{"C1 control", "c1 \u0085 gone", "c1  gone"},
		{"Korean", "한글 \x1b[32m초록\x1b[0m", "한글 초록"},
	} {
		if got := Render([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: Render(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestTail(t *testing.T) {
	text := "l1\nl2\nl3\nl4\n"
	for _, tc := range []struct {
		in           string
		lines, bytes int
		want         string
	}{
		{text, 2, 0, "l3\nl4"},
		{text, 10, 0, "l1\nl2\nl3\nl4"},
		{text, 4, 0, "l1\nl2\nl3\nl4"},
		{text, 0, 0, "l1\nl2\nl3\nl4"},
		{text, 10, 5, "l4"},     // cut at a line start
		{text, 10, 6, "l3\nl4"}, // exactly fits
		{text, 10, 1, "4"},      // no line fits: cut inside the line
		{text, 1, 100, "l4"},
		{"aaaa\nbbbb\ncccc", 0, 7, "cccc"},
		{"ééé", 1, 3, "é"}, // cut at a rune start
		{"a\n" + strings.Repeat("x", 2000), 0, 1999, strings.Repeat("x", 1999)}, // the line start is too far
		{"bad \xff", 0, 0, "bad \uFFFD"},
		{"", 10, 10, ""},
	} {
		if got := Tail(tc.in, tc.lines, tc.bytes); got != tc.want {
			t.Errorf("Tail(%q, %d, %d) = %q, want %q", tc.in, tc.lines, tc.bytes, got, tc.want)
		}
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"abc\rX", "a\rb\r\nc", "x\b\by", "\x1b[2Kz", "\x1b[1K", "\x1b[5G\x1b[3D", "\xff\xfe",
		"\t\x1b]8;;u\x1b\\", "\x1b]0;t\x07x", "\x1bP\x1b\\", "a\x1b", "\x1b[", "\x1b(", "\x1b]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := Render(b)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 %q", out)
		}
		for _, r := range out {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("control %U left in %q", r, out)
			}
		}
		if got, want := strings.Count(out, "\n"), bytes.Count(b, []byte("\n")); got != want {
			t.Fatalf("%d lines from %d newlines", got, want)
		}
		if again := Render([]byte(out)); again != out {
			t.Fatalf("rendering the text again changes it: %q -> %q", out, again)
		}
		tail := Tail(out, 3, 10)
		if len(tail) > 10 || !strings.HasSuffix(strings.TrimRight(out, "\n"), tail) {
			t.Fatalf("Tail(%q) = %q", out, tail)
		}
	})
}
