package filesearch

import (
	"testing"
	"unicode/utf16"

	"github.com/junegunn/fzf/src/algo"
	"github.com/junegunn/fzf/src/util"
)

// FuzzPositions: for any eligible path and query that matches, the
// positions are ascending UTF-16 offsets, one per query character, each
// at the start of a character of the path.
func FuzzPositions(f *testing.F) {
	for _, s := range [][2]string{{"a/b/serve.go", "serve"}, {"dé/ü𝄞x.go", "xgo"}, {"日本/テスト.md", "テ"}, {"x/", "x/"}, {"Ǆ/ǅ", "ǆ"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, q string) {
		if !Eligible(p) || p == "" {
			return
		}
		e := newEntry(p)
		qy := newQuery(q)
		if len(qy.pattern) == 0 {
			return
		}
		slab := util.MakeSlab(100*1024, 2048)
		r, pos := algo.FuzzyMatchV2(false, true, false, &e.chars, qy.pattern, true, slab)
		if r.Start < 0 {
			return
		}
		_ = rank(&e, r, qy, slab)
		offs := utf16Offsets(p, pos)
		if len(offs) != len(qy.pattern) {
			t.Fatalf("%q in %q: %d positions for %d characters", q, p, len(offs), len(qy.pattern))
		}
		units := utf16.Encode([]rune(p))
		starts := map[int]bool{}
		u := 0
		for _, r := range p {
			starts[u] = true
			u += len(utf16.Encode([]rune{r}))
		}
		for i, o := range offs {
			if o < 0 || o >= len(units) || !starts[o] || i > 0 && o <= offs[i-1] {
				t.Fatalf("%q in %q: bad positions %v", q, p, offs)
			}
		}
	})
}
