package compaction

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/dlclark/regexp2/v2"
	// The library's generated matcher for o200kPattern: its init registers
	// it with regexp2, which then compiles the pattern to that code instead
	// of its interpreter (several times faster). Nothing else of the
	// package is linked: its vocabulary is a map literal of 6 MB of binary,
	// all of it mapped in an idle sidecar's memory (its strings sit among
	// every other string of the program).
	_ "github.com/tiktoken-go/tokenizer/codec"
)

// o200kTokens is the o200k_base vocabulary, compressed: flate of a uvarint
// token count, one length byte per token, then the tokens' bytes, all in
// rank order (a token's rank is its index). Written by TestO200kVocabCurrent
// with -update from github.com/tiktoken-go/tokenizer, which that test also
// checks it against. About 1 MB, one block the program reads only when it
// first counts exactly.
//
//go:embed o200k_base.tokens
var o200kTokens []byte

// o200kPattern is o200k_base's pre-tokenizer split, as the library writes it
// (the same string selects its generated matcher).
const o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// errVocab reports a corrupt embedded vocabulary.
var errVocab = errors.New("o200k vocabulary corrupt")

// bpe counts o200k_base tokens: the text is split by o200kPattern and each
// piece that is not a token itself is merged pair by pair, lowest rank
// first (tiktoken's byte-pair merge, as github.com/tiktoken-go/tokenizer
// does it; TestCountsMatchReference and its fuzz target keep the counts
// equal to that library's). Special tokens count as plain text, as
// tiktoken's encode_ordinary does. Safe for concurrent use.
type bpe struct {
	ranks map[string]uint32
	split *regexp2.Regexp
}

// newO200k builds the o200k_base counter from the embedded vocabulary.
func newO200k() (*bpe, error) {
	ranks, err := decodeVocab(o200kTokens)
	if err != nil {
		return nil, err
	}
	// MustCompile, not Compile: only it looks up a generated matcher. The
	// pattern is a constant the tests compile.
	return &bpe{ranks: ranks, split: regexp2.MustCompile(o200kPattern, regexp2.None)}, nil
}

// Count returns the number of tokens of s.
func (b *bpe) Count(s string) (int, error) {
	n := 0
	m, err := b.split.FindStringMatch(s)
	for err == nil && m != nil {
		piece := m.String()
		if _, ok := b.ranks[piece]; ok {
			n++
		} else {
			n += b.merged(piece)
		}
		m, err = b.split.FindNextMatch(m)
	}
	if err != nil {
		return 0, fmt.Errorf("o200k split: %w", err)
	}
	return n, nil
}

// merged returns how many tokens piece merges to. Each merge rescans the
// parts, O(n²) in the piece's length; pieces are words, numbers, runs of
// punctuation or of space, and the estimator counts texts of at most
// exactBytes exactly.
func (b *bpe) merged(piece string) int {
	const none = math.MaxUint32
	type part struct {
		start int
		rank  uint32 // of the pair this part begins
	}
	parts := make([]part, len(piece)+1)
	for i := range parts {
		parts[i] = part{i, none}
	}
	// rank is that of parts[i] joined with the skip+1 parts after it.
	rank := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := b.ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
				return r
			}
		}
		return none
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		best, at := uint32(none), 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if best == none {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// decodeVocab reads the format of o200kTokens into token → rank.
func decodeVocab(z []byte) (map[string]uint32, error) {
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errVocab, err)
	}
	n, k := binary.Uvarint(raw)
	if k <= 0 || n > uint64(len(raw)-k) {
		return nil, fmt.Errorf("%w: bad count", errVocab)
	}
	lens, body := raw[k:k+int(n)], raw[k+int(n):]
	// One string for all tokens; the map keys are slices of it.
	all := string(body)
	ranks := make(map[string]uint32, n)
	off := 0
	for rank, l := range lens {
		if l == 0 || off+int(l) > len(all) {
			return nil, fmt.Errorf("%w: truncated at rank %d", errVocab, rank)
		}
		ranks[all[off:off+int(l)]] = uint32(rank)
		off += int(l)
	}
	if off != len(all) || len(ranks) != int(n) {
		return nil, fmt.Errorf("%w: %d trailing bytes, %d of %d distinct tokens", errVocab, len(all)-off, len(ranks), n)
	}
	return ranks, nil
}
