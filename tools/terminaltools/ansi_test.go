package terminaltools

import (
	"bytes"
	"testing"
)

func TestStripANSI(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\n", "plain text\n"},
		{"\x1b[31mred\x1b[0m normal", "red normal"},
		{"\x1b[1;38;5;208mbold orange\x1b[m", "bold orange"},
		{"\x1b[?25l\x1b[2J\x1b[Hscreen\x1b[?25h", "screen"},
		{"\x1b]0;window title\x07prompt$ ", "prompt$ "},
		{"\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1bP1$r0m\x1b\\after dcs", "after dcs"},
		{"\x1b(Bascii\x1b)0", "ascii"},
		{"\x1b7saved\x1b8\x1b=\x1b>", "saved"},
		{"line1\r\nline2\r\n", "line1\nline2\n"},
		{"progress 10%\rprogress 55%\rprogress 100%\n", "progress 100%\n"},
		{"downloading...\r\x1b[Kdone\n", "done\n"},
		{"keep me\r\n", "keep me\n"},
		{"spinner |\r", "spinner |"},
		{"abc\b\bX", "aX"},
		{"héllo\bo", "héllo"},
		{"é\bx", "x"},
		{"over\rX\b\bY", "Y"},
		{"bell\x07 nul\x00 del\x7f", "bell nul del"},
		{"tab\tkept", "tab\tkept"},
		{"unfinished \x1b[31", "unfinished "},
		{"broken \x1b[12\nnext", "broken \nnext"},
		{"osc no end \x1b]0;title", "osc no end "},
		{"trailing esc \x1b", "trailing esc "},
		{"\xff\xfe invalid kept", "\xff\xfe invalid kept"},
		{"한글 \x1b[32m초록\x1b[0m", "한글 초록"},
	}
	for _, c := range cases {
		got := StripANSI([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("StripANSI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzStripANSI(f *testing.F) {
	f.Add([]byte("\x1b[31mred\x1b[0m\r\nnext\rover\b!\x1b]0;t\x07"))
	f.Add([]byte("\x1bP\x1b\\\x1b(B\x1b"))
	f.Add([]byte("a\r\r\nb\b\b\b"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := StripANSI(in)
		if len(out) > len(in) {
			t.Fatalf("output longer than input: %d > %d", len(out), len(in))
		}
		for _, c := range out {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				t.Fatalf("control byte %#x left in %q", c, out)
			}
		}
		if again := StripANSI(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}

func BenchmarkStripANSI(b *testing.B) {
	line := []byte("\x1b[32m  ✓\x1b[0m test \x1b[1mpasses\x1b[0m in 12ms \x1b]8;;file:///x\x1b\\link\x1b]8;;\x1b\\\r\n")
	in := bytes.Repeat(line, 1<<16/len(line))
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		StripANSI(in)
	}
}
