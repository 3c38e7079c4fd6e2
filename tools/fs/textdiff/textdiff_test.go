package textdiff

import (
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	new := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n"
	got := Unified("x.txt", old, new, 1, 0)
	want := "--- a/x.txt\n+++ b/x.txt\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n@@ -10,1 +10,2 @@\n j\n+k\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if Unified("x", old, old, 3, 0) != "" {
		t.Fatal("equal texts give no diff")
	}
	created := Unified("n", "", "one\ntwo\n", 3, 0)
	if !strings.Contains(created, "@@ -0,0 +1,2 @@\n+one\n+two\n") {
		t.Fatalf("creation diff: %s", created)
	}
	trunc := Unified("n", "", strings.Repeat("x\n", 100), 3, 10)
	if strings.Count(trunc, "\n") != 11 || !strings.HasSuffix(trunc, "(diff truncated)\n") {
		t.Fatalf("truncated diff: %q", trunc)
	}
	if a, r := Count(old, new); a != 2 || r != 1 {
		t.Fatalf("Count = +%d -%d", a, r)
	}
}
