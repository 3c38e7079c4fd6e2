package termtext

import (
	"strings"
	"unicode/utf8"
)

// nearLine is how far into the kept bytes Tail looks for a line start.
const nearLine = 1024

// Tail returns the last maxLines lines of text (a trailing newline does not
// start a line), then at most its last maxBytes bytes, cut at a line start
// when one is near or else at a UTF-8 boundary. maxLines or maxBytes <= 0
// means no limit. Invalid UTF-8 becomes U+FFFD.
func Tail(text string, maxLines, maxBytes int) string {
	text = strings.TrimRight(text, "\n")
	if maxLines > 0 {
		n := 0
		for i := len(text) - 1; i >= 0; i-- {
			if text[i] == '\n' {
				if n++; n == maxLines {
					text = text[i+1:]
					break
				}
			}
		}
	}
	if maxBytes > 0 && len(text) > maxBytes {
		text = text[len(text)-maxBytes:]
		if i := strings.IndexByte(text, '\n'); i >= 0 && i < nearLine && i+1 < len(text) {
			text = text[i+1:]
		} else {
			for len(text) > 0 && !utf8.RuneStart(text[0]) {
				text = text[1:]
			}
		}
	}
	return strings.ToValidUTF8(text, "\uFFFD")
}
