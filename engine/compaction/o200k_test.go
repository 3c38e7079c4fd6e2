package compaction

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer/codec"
)

// reference is github.com/tiktoken-go/tokenizer's o200k_base, the source of
// the embedded vocabulary and the judge of every count. Only tests link it.
var reference = sync.OnceValue(codec.NewO200kBase)

// o200kVocabSize is the number of o200k_base's ordinary tokens (ranks
// 0..199997; the special tokens come after).
const o200kVocabSize = 199_998

// TestO200kVocabCurrent checks the embedded vocabulary against the
// library's; -update rewrites it.
func TestO200kVocabCurrent(t *testing.T) {
	ref := reference()
	tokens := make([]string, o200kVocabSize)
	for id := range tokens {
		s, err := ref.Decode([]uint{uint(id)})
		require.NoError(t, err, "rank %d", id)
		tokens[id] = s
	}
	_, err := ref.Decode([]uint{o200kVocabSize})
	require.Error(t, err, "o200k_base has more than %d ordinary tokens", o200kVocabSize)
	if *update {
		z, err := encodeVocab(tokens)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile("o200k_base.tokens", z, 0o644))
		t.Skip("wrote o200k_base.tokens: rebuild to embed it")
	}
	ranks, err := decodeVocab(o200kTokens)
	require.NoError(t, err, "go test ./engine/compaction -run TestO200kVocabCurrent -update rewrites it")
	require.Len(t, ranks, len(tokens))
	for id, s := range tokens {
		require.Equal(t, uint32(id), ranks[s], "rank of %q (go test ./engine/compaction -run TestO200kVocabCurrent -update rewrites it)", s)
	}
}

func TestDecodeVocabRejectsCorruption(t *testing.T) {
	good, err := encodeVocab([]string{"a", "b", "ab"})
	require.NoError(t, err)
	ranks, err := decodeVocab(good)
	require.NoError(t, err)
	require.Equal(t, map[string]uint32{"a": 0, "b": 1, "ab": 2}, ranks)

	raw := func(b []byte) []byte {
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.BestSpeed)
		_, _ = w.Write(b)
		_ = w.Close()
		return z.Bytes()
	}
	for name, z := range map[string][]byte{
		"not flate":    []byte("plain"),
		"empty":        raw(nil),
		"count > size": raw(binary.AppendUvarint(nil, 1000)),
		"truncated":    raw([]byte{2, 1, 5, 'a'}),
		"trailing":     raw([]byte{1, 1, 'a', 'b'}),
		"duplicate":    raw([]byte{2, 1, 1, 'a', 'a'}),
	} {
		_, err := decodeVocab(z)
		require.ErrorIs(t, err, errVocab, name)
	}
}

// countCorpus is text of every kind a history holds.
func countCorpus() []string {
	texts := []string{
		"hello world",
		"Hello, World! It's a test: we're done, they'll see, I'd say, you've been, I'm here. IT'S LOUD",
		"The quick brown fox jumps over the lazy dog. 1234567890 3.14159 1,000,000 0xDEADBEEF",
		"func parse(x int) error { return fmt.Errorf(\"bad %d\", x) } // 解析器\n",
		"package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := range 10 {\n\t\tfmt.Println(i)\n\t}\n}\n",
		"def f(x):\r\n    return [y**2 for y in range(x) if y % 2 == 0]\r\n\r\n",
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/src/a.go"}}}`,
		"SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '7 days' ORDER BY id DESC;",
		"https://example.com/path/to/file?query=a&b=c#frag  /usr/local/bin/go  C:\\Windows\\System32",
		"日本語のテキストです。東京は日本の首都です。",
		"中文测试：这是一个用于计数的句子，包含标点符号！",
		"한국어 문장입니다. Привет, мир! Ελληνικά. مرحبا بالعالم. שלום עולם. नमस्ते दुनिया",
		"emoji 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ ✨🚀",
		"combining: e\u0301 a\u0308 n\u0303; zero width\u200b joiner\u200d; bidi \u202e reversed",
		strings.Repeat(" ", 3000) + "x",
		strings.Repeat("\t", 500) + "\n" + strings.Repeat("\n", 300),
		"a" + strings.Repeat(" ", 17) + "b\n\n\n   \n\t\t\n  c",
		strings.Repeat("ab", 700),
		strings.Repeat("-", 1200) + strings.Repeat("=", 97),
		strings.Repeat("0123456789", 40),
		"<|endoftext|> after the end <|endofprompt|> <|fim_prefix|> <|im_start|>user\nhi<|im_end|>",
		"<|endoftext|><|endoftext|>",
		"diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,4 @@\n-old line\n+new line\n+another\n",
		"\x1b[31mred\x1b[0m \x1b[1;32mbold green\x1b[0m\r\n",
		"invalid \xff\xfe utf-8 \xc3 and a lone \xe2\x82 continuation \x80",
		"",
		" ",
		"\n",
		"'s 'T 'RE 'Ve 'll 'D're",
		"ÀÉÎÕÜ àéîõü ÆØÅ æøå ß ſ ﬁ",
		"\x7f", "a\x7fb \x00\x01\x1f", // the generated split matcher counts DEL as no token (the interpreter as one): these keep us on it
	}
	// Real source text: this package.
	for _, f := range []string{"tokens.go", "compaction.go", "o200k.go"} {
		if b, err := os.ReadFile(f); err == nil {
			texts = append(texts, string(b))
		}
	}
	for i := range 50 {
		texts = append(texts, fmt.Sprintf("line %d: %s 数字%d 😀%x\n", i, strings.Repeat("word ", i), i*i, i*7919))
	}
	return texts
}

// TestCountsMatchReference keeps every count identical to the library's
// o200k_base.
func TestCountsMatchReference(t *testing.T) {
	e := NewEstimator("gpt-4o")
	require.NotNil(t, e.bpe)
	ref := reference()
	for _, s := range countCorpus() {
		want, err := ref.Count(s)
		require.NoError(t, err)
		require.Equal(t, want, e.count(s), "%.60q", s)
	}
	// The sampled path counts the same windows.
	big := strings.Join(countCorpus(), "\n")
	want, err := ref.Count(big)
	require.NoError(t, err)
	require.Equal(t, want, e.count(big))
}

// FuzzCountsMatchReference looks for a text whose count differs.
func FuzzCountsMatchReference(f *testing.F) {
	for _, s := range countCorpus() {
		f.Add(s)
	}
	e := NewEstimator("gpt-4o")
	ref := reference()
	f.Fuzz(func(t *testing.T, s string) {
		want, err := ref.Count(s)
		require.NoError(t, err)
		require.Equal(t, want, e.count(s), "%q", s)
	})
}

// encodeVocab writes tokens, in rank order, in the format of o200kTokens.
func encodeVocab(tokens []string) ([]byte, error) {
	raw := binary.AppendUvarint(nil, uint64(len(tokens)))
	for _, t := range tokens {
		if len(t) == 0 || len(t) > 255 {
			return nil, fmt.Errorf("token of %d bytes", len(t))
		}
		raw = append(raw, byte(len(t)))
	}
	for _, t := range tokens {
		raw = append(raw, t...)
	}
	var z bytes.Buffer
	w, err := flate.NewWriter(&z, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return z.Bytes(), nil
}

// BenchmarkCount counts this package's source with the embedded BPE and
// with the library it replaces (same split matcher, same merge).
func BenchmarkCount(b *testing.B) {
	var text strings.Builder
	for _, f := range []string{"tokens.go", "compaction.go", "o200k.go", "elide.go"} {
		s, err := os.ReadFile(f)
		require.NoError(b, err)
		text.Write(s)
	}
	src := text.String()
	ours, err := newO200k()
	require.NoError(b, err)
	ref := reference()
	for _, c := range []struct {
		name  string
		count func(string) (int, error)
	}{{"embedded", ours.Count}, {"library", ref.Count}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := c.count(src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewO200k is the cost of the first exact count.
func BenchmarkNewO200k(b *testing.B) {
	for b.Loop() {
		if _, err := newO200k(); err != nil {
			b.Fatal(err)
		}
	}
}
