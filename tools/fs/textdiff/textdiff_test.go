package textdiff

import (
	"fmt"
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

func TestChange(t *testing.T) {
	cases := []struct {
		name            string
		old, new        string
		existed, exists bool
		want            string
	}{
		{"edit", "a\nb\n", "a\nB\n", true, true, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"},
		{"create", "", "x\n", false, true, "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n"},
		{"create empty", "", "", false, true, "--- /dev/null\n+++ b/f\n"},
		{"delete", "x\n", "", true, false, "--- a/f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n"},
		{"same", "x\n", "x\n", true, true, ""},
		{"binary", "a\x00b", "c", true, true, "Binary files a/f and b/f differ\n"},
		{"not utf-8", "a\n", "\xff\xfe\n", true, true, "Binary files a/f and b/f differ\n"},
	}
	for _, tc := range cases {
		if got := Change("f", []byte(tc.old), []byte(tc.new), tc.existed, tc.exists); got != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

// TestLargeFileEditedAtBothEnds: a 3,000-line file changed in its first
// and last lines shows two one-line hunks and counts +2 -2 (a diff bounded
// by an LCS table showed the whole file replaced).
func TestLargeFileEditedAtBothEnds(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	old := b.String()
	new := "first\n" + strings.TrimPrefix(old, "line 0\n")
	new = strings.TrimSuffix(new, "line 2999\n") + "last\n"
	if a, r := Count(old, new); a != 2 || r != 2 {
		t.Fatalf("Count = +%d -%d, want +2 -2", a, r)
	}
	want := "--- a/big.txt\n+++ b/big.txt\n@@ -1,2 +1,2 @@\n-line 0\n+first\n line 1\n@@ -2999,2 +2999,2 @@\n line 2998\n-line 2999\n+last\n"
	if got := Unified("big.txt", old, new, 1, 0); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
