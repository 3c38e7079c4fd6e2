//go:build darwin

package oslocale

import "testing"

func TestFirstAppleLanguage(t *testing.T) {
	out := "(\n    \"zh-Hant-TW\",\n    \"en-US\"\n)\n"
	if got := firstAppleLanguage(out); got != "zh-Hant-TW" {
		t.Errorf("got %q", got)
	}
	if got := firstAppleLanguage("(\n)\n"); got != "" {
		t.Errorf("empty list: %q", got)
	}
}
