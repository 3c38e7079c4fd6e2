package compaction

import (
	"log/slog"
	"runtime"
	"sync"

	"github.com/zqagent/sidecar/engine/models"
	"github.com/zqagent/sidecar/llm"
)

// Token accounting. Current OpenAI models are counted with their real BPE
// (o200k_base, its vocabulary embedded compressed in the binary, see
// o200k.go: nothing is downloaded). Only o200k is embedded (about 1 MB; the
// release budget is 25 MB). Other families, and OpenAI's
// legacy cl100k models, get a calibrated estimate: the o200k count scaled
// by a per-family factor measured against their tokenizers (DeepSeek,
// Qwen, GLM, Kimi and Llama split code and CJK text into somewhat more
// pieces).
//
// Large texts are counted by sampling: exact BPE up to exactBytes, beyond
// that evenly spaced windows (one per windowEvery bytes, at most samples)
// are counted and the ratio extrapolated. Errors of single messages average
// out over a history: a fresh 200K-token history is estimated within a few
// percent in about 20 ms. Counts are cached by content, so the history
// re-estimated before every request costs only its new messages.

const (
	exactBytes  = 1 << 10 // count exactly up to this size
	sampleBytes = 256     // size of one sample window
	windowEvery = 4 << 10 // one window per this many bytes
	samples     = 64      // windows per large text at most
	perMessage  = 4       // role and framing tokens per message
	perImage    = 765     // a high-detail image tile budget
	cacheLimit  = 20_000  // entries before the cache is reset
)

// familyFactor calibrates the o200k count for models without an exact
// tokenizer here.
var familyFactor = map[string]float64{
	"openai-cl100k": 1.03,
	"deepseek":      1.10,
	"qwen":          1.08,
	"kimi":          1.08,
	"glm":           1.12,
	"llama":         1.15,
	"unknown":       1.15,
}

// Estimator counts tokens of messages. Safe for concurrent use.
type Estimator struct {
	bpe    *bpe // nil if the vocabulary is corrupt, see o200k
	factor float64
	exact  bool

	mu    sync.Mutex
	cache map[string]int // guarded by mu; text → raw BPE count
}

// o200k is the one BPE, built on first use (unpacking and indexing its
// vocabulary takes some 20–40 ms and ~8 MB of heap). Nil if the embedded
// vocabulary is corrupt: a broken build, which TestO200kVocabCurrent
// catches, and no reason to stop a session; texts are then estimated by
// size.
var o200k = sync.OnceValue(func() *bpe {
	b, err := newO200k()
	if err != nil {
		slog.Error("token estimator", "err", err)
	}
	return b
})

// NewEstimator returns the estimator for a model.
func NewEstimator(model string) *Estimator {
	caps := models.Lookup(model)
	e := &Estimator{cache: map[string]int{}, factor: 1}
	e.bpe = o200k()
	if caps.Tokenizer == "o200k_base" {
		e.exact = true
	} else {
		if f, ok := familyFactor[caps.Family]; ok {
			e.factor = f
		} else {
			e.factor = familyFactor["unknown"]
		}
	}
	return e
}

// Exact reports whether counts use the model's own tokenizer.
func (e *Estimator) Exact() bool { return e.exact }

// Text counts the tokens of one text.
func (e *Estimator) Text(s string) int {
	if s == "" {
		return 0
	}
	e.mu.Lock()
	n, ok := e.cache[s]
	e.mu.Unlock()
	if !ok {
		n = e.raw(s)
		e.mu.Lock()
		if len(e.cache) >= cacheLimit {
			e.cache = map[string]int{}
		}
		e.cache[s] = n
		e.mu.Unlock()
	}
	return int(float64(n)*e.factor + 0.5)
}

// raw counts with BPE, sampling large texts.
func (e *Estimator) raw(s string) int {
	if len(s) <= exactBytes {
		return e.count(s)
	}
	k := min(max(len(s)/windowEvery, 2), samples)
	step := (len(s) - sampleBytes) / (k - 1)
	tokens, bytes := 0, 0
	for i := range k {
		start := runeStart(s, i*step)
		end := runeStart(s, min(start+sampleBytes, len(s)))
		tokens += e.count(s[start:end])
		bytes += end - start
	}
	if bytes == 0 {
		return e.count(s)
	}
	return int(float64(tokens) * float64(len(s)) / float64(bytes))
}

// warm counts the uncached texts of msgs in parallel when there are many.
func (e *Estimator) warm(msgs []llm.Message) {
	var todo []string
	size := 0
	e.mu.Lock()
	for _, m := range msgs {
		for _, t := range append([]string{m.Content}, argTexts(m)...) {
			if _, ok := e.cache[t]; !ok && t != "" {
				todo = append(todo, t)
				size += len(t)
			}
		}
	}
	e.mu.Unlock()
	workers := runtime.GOMAXPROCS(0)
	if size < parallelBytes || workers < 2 {
		return
	}
	counts := make([]int, len(todo))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(todo); i += workers {
				counts[i] = e.raw(todo[i])
			}
		})
	}
	wg.Wait()
	e.mu.Lock()
	if len(e.cache)+len(todo) >= cacheLimit {
		e.cache = map[string]int{}
	}
	for i, t := range todo {
		e.cache[t] = counts[i]
	}
	e.mu.Unlock()
}

func argTexts(m llm.Message) []string {
	if len(m.ToolCalls) == 0 {
		return nil
	}
	out := make([]string, 0, len(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		out = append(out, tc.Arguments)
	}
	return out
}

func (e *Estimator) count(s string) int {
	if e.bpe == nil {
		return len(s) / 4
	}
	n, err := e.bpe.Count(s)
	if err != nil {
		return len(s) / 4
	}
	return n
}

func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// Message counts one message: content, reasoning, tool calls, attachments
// and framing.
func (e *Estimator) Message(m llm.Message) int {
	n := perMessage + e.Text(m.Content)
	for _, tc := range m.ToolCalls {
		n += perMessage + e.Text(tc.Name) + e.Text(tc.Arguments)
	}
	n += perImage * len(m.Attachments)
	return n
}

// parallelBytes is the amount of uncounted text from which Messages counts
// on every core.
const parallelBytes = 64 << 10

// Messages counts a history. A history with much uncounted text (a session
// restored from disk, a new model) is counted on every core.
func (e *Estimator) Messages(msgs []llm.Message) int {
	e.warm(msgs)
	n := 3
	for _, m := range msgs {
		n += e.Message(m)
	}
	return n
}
