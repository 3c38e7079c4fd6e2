package web

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzHTMLToMarkdown(f *testing.F) {
	f.Add([]byte(samplePage))
	f.Add([]byte("<p>unclosed <b>bold <a href='javascript:x'>x"))
	f.Add([]byte("<table><tr><td>a<td>b</table><svg><script>x</script></svg>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, md, err := htmlToMarkdown(context.Background(), body, "https://example.com/a/")
		if err != nil {
			return
		}
		if strings.Contains(md, "<script") {
			t.Fatalf("script tag survived: %q", md)
		}
	})
}

func FuzzPlainText(f *testing.F) {
	f.Add("a <strong>b</strong> &amp; c")
	f.Add("<<<>>>&#x0;&")
	f.Fuzz(func(t *testing.T, s string) {
		out := plainText(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from valid input: %q", out)
		}
		if strings.Contains(out, "  ") {
			t.Fatalf("whitespace not collapsed: %q", out)
		}
	})
}

func FuzzParseURL(f *testing.F) {
	f.Add("https://example.com/x?y=1")
	f.Add("file:///etc/passwd")
	f.Add("http://[::1]:80/")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURL(s)
		if err != nil {
			return
		}
		if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" || u.Hostname() == "" {
			t.Fatalf("ParseURL accepted %q", s)
		}
	})
}

func BenchmarkHTMLToMarkdown(b *testing.B) {
	page := []byte(strings.Replace(samplePage, "<h1>", strings.Repeat("<p>Paragraph with <a href='/x'>a link</a> and <code>code</code>.</p>\n", 200)+"<h1>", 1))
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, _, err := htmlToMarkdown(context.Background(), page, "https://example.com/"); err != nil {
			b.Fatal(err)
		}
	}
}
