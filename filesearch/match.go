package filesearch

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/junegunn/fzf/src/algo"
	"github.com/junegunn/fzf/src/util"
)

// Limits of one search.
const (
	DefaultLimit  = 50
	MaxLimit      = 200
	MaxQueryRunes = 256
)

// Bonuses on top of fzf's score (whose unit is 16 per matched character).
const (
	bonusInBase     = 16 // the whole match lies in the last element
	bonusBasePrefix = 16 // the last element starts with the query
	bonusBaseExact  = 32 // the last element, or it without its extension, is the query
	maxBonus        = bonusInBase + bonusBasePrefix + bonusBaseExact
)

// minChunk is the fewest entries a matching goroutine is given.
const minChunk = 8192

// fzf's matcher keeps its scheme in package variables: set once, before
// any match, for paths (bonus after "/", none after spaces).
var _ = algo.Init("path")

// slabs are fzf's scratch memory, one per matching goroutine (fzf's own
// sizes).
var slabs = sync.Pool{New: func() any { return util.MakeSlab(100*1024, 2048) }}

// Match is one path found.
type Match struct {
	// Path is slash-separated, relative to the root; a directory's ends in "/".
	Path string
	// Score ranks the match; higher is better. Only the order means
	// anything.
	Score int
	// Positions are the UTF-16 offsets of the matched characters in Path,
	// ascending.
	Positions []int
}

// Results is what Search found.
type Results struct {
	Matches []Match
	// Truncated: the index holds MaxEntries paths and left others out.
	Truncated bool
}

// lastMatch is a complete search's matches: a search whose pattern
// extends it needs to look at those only, while the index is unchanged.
type lastMatch struct {
	pattern []rune
	version uint64
	slots   []int32
}

// query is a search's pattern in the forms the matcher and ranking need.
type query struct {
	text    string // as typed (at most MaxQueryRunes characters)
	pattern []rune // lowercased, Latin diacritics folded: what fzf matches
}

func newQuery(q string) query {
	if utf8.RuneCountInString(q) > MaxQueryRunes {
		q = string([]rune(q)[:MaxQueryRunes])
	}
	return query{text: q, pattern: algo.NormalizeRunes([]rune(strings.ToLower(q)))}
}

// Search returns the best limit matches of query (DefaultLimit for 0, at
// most MaxLimit), best first. The first search builds the index and waits
// for it (until ctx ends: the build goes on for the next search). An
// empty query returns the shallowest paths, in byte order, with score 0
// and no positions. It fails with context.Cause(ctx) when ctx ends first.
func (ix *Index) Search(ctx context.Context, q string, limit int) (Results, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	qy := newQuery(q)
	s, err := ix.ready(ctx)
	if err != nil {
		return Results{}, err
	}
	defer ix.mu.Unlock()
	res := Results{Truncated: s.truncated}
	if len(qy.pattern) == 0 {
		res.Matches = s.shallowest(limit)
		return res, nil
	}
	var cands []int32 // nil: every entry
	if l := ix.last; l.pattern != nil && l.version == ix.version && isSubsequence(l.pattern, qy.pattern) {
		cands = l.slots
		if cands == nil {
			cands = []int32{}
		}
	}
	top, matched, err := s.match(ctx, qy, cands, limit)
	if err != nil {
		return Results{}, err
	}
	ix.last = lastMatch{pattern: qy.pattern, version: ix.version, slots: matched}
	slab := slabs.Get().(*util.Slab)
	defer slabs.Put(slab)
	res.Matches = make([]Match, len(top))
	for i, c := range top {
		e := &s.entries[c.slot]
		_, pos := algo.FuzzyMatchV2(false, true, false, &e.chars, qy.pattern, true, slab)
		res.Matches[i] = Match{Path: e.path, Score: int(c.score), Positions: utf16Offsets(e.path, pos)}
	}
	return res, nil
}

// scored is a matched entry.
type scored struct {
	slot  int32
	score int32
}

// match matches the entries at cands (all when nil) against q on every
// core and returns the best limit, best first, and every match's slot.
func (s *snapshot) match(ctx context.Context, q query, cands []int32, limit int) ([]scored, []int32, error) {
	n := len(s.entries)
	if cands != nil {
		n = len(cands)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, context.Cause(ctx)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), n/minChunk))
	type part struct {
		top     topK
		matched []int32
		err     error
	}
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		p := &parts[w]
		p.top = topK{k: limit, better: s.better}
		wg.Go(func() {
			slab := slabs.Get().(*util.Slab)
			defer slabs.Put(slab)
			for i := lo; i < hi; i++ {
				if i&1023 == 0 {
					if err := ctx.Err(); err != nil {
						p.err = context.Cause(ctx)
						return
					}
				}
				slot := int32(i)
				if cands != nil {
					slot = cands[i]
				}
				e := &s.entries[slot]
				r, _ := algo.FuzzyMatchV2(false, true, false, &e.chars, q.pattern, false, slab)
				if r.Start < 0 {
					continue
				}
				p.matched = append(p.matched, slot)
				if w, full := p.top.worst(); full && r.Score+maxBonus < int(w.score) {
					continue // cannot make the best limit whatever its bonuses
				}
				p.top.push(scored{slot, int32(rank(e, r, q, slab))})
			}
		})
	}
	wg.Wait()
	var all []scored
	var matched []int32
	for _, p := range parts {
		if p.err != nil {
			return nil, nil, p.err
		}
		all = append(all, p.top.items...)
		matched = append(matched, p.matched...)
	}
	if matched == nil {
		matched = []int32{}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if s.better(a, b) {
			return -1
		}
		if s.better(b, a) {
			return 1
		}
		return 0
	})
	return all[:min(limit, len(all))], matched, nil
}

// rank is fzf's score of e plus the bonuses for its last element.
func rank(e *entry, r algo.Result, q query, slab *util.Slab) int {
	sc := r.Score
	if e.base > 0 {
		// Without positions fzf does not say where the match starts: ask
		// it about the last element alone.
		base := e.baseChars()
		if br, _ := algo.FuzzyMatchV2(false, true, false, &base, q.pattern, false, slab); br.Start >= 0 {
			sc += bonusInBase
		}
	} else {
		sc += bonusInBase // the path is its last element
	}
	base := e.baseName()
	if len(base) >= len(q.text) && strings.EqualFold(base[:len(q.text)], q.text) {
		sc += bonusBasePrefix
	}
	stem := base
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		stem = base[:i]
	}
	if strings.EqualFold(base, q.text) || strings.EqualFold(stem, q.text) {
		sc += bonusBaseExact
	}
	return sc
}

// better orders matches: higher score, then the shorter path, then byte
// order.
func (s *snapshot) better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	pa, pb := s.entries[a.slot].path, s.entries[b.slot].path
	if len(pa) != len(pb) {
		return len(pa) < len(pb)
	}
	return pa < pb
}

// shallowest returns the limit entries nearest the root, in byte order
// within a depth.
func (s *snapshot) shallowest(limit int) []Match {
	shallower := func(a, b scored) bool {
		ea, eb := &s.entries[a.slot], &s.entries[b.slot]
		if ea.depth != eb.depth {
			return ea.depth < eb.depth
		}
		return ea.path < eb.path
	}
	top := topK{k: limit, better: shallower}
	for i := range s.entries {
		top.push(scored{slot: int32(i)})
	}
	items := top.items
	slices.SortFunc(items, func(a, b scored) int {
		ea, eb := &s.entries[a.slot], &s.entries[b.slot]
		return cmp.Or(cmp.Compare(ea.depth, eb.depth), strings.Compare(ea.path, eb.path))
	})
	out := make([]Match, len(items))
	for i, c := range items {
		out[i] = Match{Path: s.entries[c.slot].path, Positions: []int{}}
	}
	return out
}

// topK keeps the k best items pushed: a heap whose root is the worst kept.
type topK struct {
	k      int
	better func(a, b scored) bool
	items  []scored
}

func (t *topK) push(x scored) {
	if len(t.items) < t.k {
		t.items = append(t.items, x)
		t.up(len(t.items) - 1)
		return
	}
	if t.k == 0 || !t.better(x, t.items[0]) {
		return
	}
	t.items[0] = x
	t.down(0)
}

// worst returns the worst item kept, and whether k are kept.
func (t *topK) worst() (scored, bool) {
	if len(t.items) < t.k || t.k == 0 {
		return scored{}, false
	}
	return t.items[0], true
}

// worse is the heap order: the root is the worst.
func (t *topK) worse(i, j int) bool { return t.better(t.items[j], t.items[i]) }

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(i, p) {
			return
		}
		t.items[i], t.items[p] = t.items[p], t.items[i]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.worse(r, l) {
			m = r
		}
		if !t.worse(m, i) {
			return
		}
		t.items[i], t.items[m] = t.items[m], t.items[i]
		i = m
	}
}

// isSubsequence reports whether a's runes appear in b in order: every
// path that b matches, a matches too.
func isSubsequence(a, b []rune) bool {
	i := 0
	for _, r := range b {
		if i < len(a) && a[i] == r {
			i++
		}
	}
	return i == len(a)
}

// utf16Offsets turns fzf's rune offsets into p into UTF-16 offsets,
// ascending.
func utf16Offsets(p string, pos *[]int) []int {
	out := []int{}
	if pos == nil {
		return out
	}
	runes := slices.Clone(*pos)
	slices.Sort(runes)
	if len(p) == utf8.RuneCountInString(p) {
		return runes // ASCII: the same offsets
	}
	ri, u := 0, 0
	next := 0
	for _, r := range p {
		for next < len(runes) && runes[next] == ri {
			out = append(out, u)
			next++
		}
		ri++
		if r >= 0x10000 {
			u += 2
		} else {
			u++
		}
	}
	return out
}
