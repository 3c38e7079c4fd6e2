package filesearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zqagent/sidecar/filesearch"
)

// The benchmarks' tree: 100,000 files in 1,110 directories (10 × 10 × 10
// below 10 × 10 below 10), names made of words of a code base.
const benchFiles = 100_000

var words = []string{
	"server", "client", "handler", "config", "service", "router", "session", "store",
	"event", "stream", "cache", "index", "search", "query", "model", "agent",
	"tool", "shell", "terminal", "project", "worker", "queue", "token", "auth",
	"parser", "render", "schema", "proto", "codec", "buffer", "socket", "watch",
	"logger", "metrics", "plugin", "module", "types", "utils", "errors", "state",
}

var exts = []string{".go", "_test.go", ".ts", ".tsx", ".md", ".json", ".py", ".rs"}

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchTree writes the tree once per process (into a directory removed
// by TestMain).
func benchTree(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "filesearch-bench-")
		if benchErr != nil {
			return
		}
		r := rand.New(rand.NewPCG(1, 2))
		word := func() string { return words[r.IntN(len(words))] }
		var dirs []string
		for i := range 10 {
			d1 := fmt.Sprintf("%s%d", word(), i)
			for range 10 {
				d2 := filepath.Join(d1, fmt.Sprintf("%s_%s", word(), word()))
				for k := range 10 {
					dirs = append(dirs, filepath.Join(d2, fmt.Sprintf("%s%d", word(), k)))
				}
			}
		}
		per := benchFiles / len(dirs)
		for _, d := range dirs {
			full := filepath.Join(benchDir, d)
			if benchErr = os.MkdirAll(full, 0o755); benchErr != nil {
				return
			}
			for n := range per {
				name := fmt.Sprintf("%s_%s%d%s", word(), word(), n, exts[r.IntN(len(exts))])
				if benchErr = os.WriteFile(filepath.Join(full, name), nil, 0o644); benchErr != nil {
					return
				}
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// BenchmarkFirstSearch is a project's first search: the walk that builds
// the index, then the match.
func BenchmarkFirstSearch(b *testing.B) {
	root := benchTree(b)
	var before, after runtime.MemStats
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		ix, err := filesearch.New(root, filesearch.Options{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := ix.Search(context.Background(), "s", filesearch.DefaultLimit)
		if err != nil || len(res.Matches) == 0 {
			b.Fatal(err, len(res.Matches))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if ix.Len() < benchFiles {
			b.Fatalf("indexed %d paths", ix.Len())
		}
		ix.Close()
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
}

// typing is what a person types after "@", one call per keystroke.
var typing = [][]string{
	{"s", "se", "ser", "serv", "serve", "server"},
	{"h", "ha", "han", "hand", "handl", "handle", "handler"},
	{"c", "co", "con", "conf", "confi", "config", "config_"},
	{"q", "qu", "que", "queu", "queue", "queue.", "queue.g", "queue.go"},
	{"a", "ag", "age", "agen", "agent", "agent/", "agent/t", "agent/to"},
}

// BenchmarkKeystrokes is the calls of typing after the first search: it
// reports the median (p50-ms), p90-ms and the slowest call (max-ms).
func BenchmarkKeystrokes(b *testing.B) {
	root := benchTree(b)
	ix, err := filesearch.New(root, filesearch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Search(context.Background(), "", 1); err != nil {
		b.Fatal(err)
	}
	var calls []time.Duration
	for b.Loop() {
		for _, seq := range typing {
			for _, q := range seq {
				start := time.Now()
				if _, err := ix.Search(context.Background(), q, filesearch.DefaultLimit); err != nil {
					b.Fatal(err)
				}
				calls = append(calls, time.Since(start))
			}
		}
	}
	reportPercentiles(b, calls)
}

// BenchmarkUnnarrowedQuery is a search that cannot narrow the previous
// one's matches (each query is new): the whole index is matched.
func BenchmarkUnnarrowedQuery(b *testing.B) {
	root := benchTree(b)
	ix, err := filesearch.New(root, filesearch.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Search(context.Background(), "", 1); err != nil {
		b.Fatal(err)
	}
	queries := []string{"serve", "handler", "cfg", "s", "qgo", "agent/tool"}
	var calls []time.Duration
	for b.Loop() {
		for _, q := range queries {
			start := time.Now()
			if _, err := ix.Search(context.Background(), q, filesearch.DefaultLimit); err != nil {
				b.Fatal(err)
			}
			calls = append(calls, time.Since(start))
		}
	}
	reportPercentiles(b, calls)
}

func reportPercentiles(b *testing.B, calls []time.Duration) {
	slices.Sort(calls)
	at := func(p float64) float64 {
		return float64(calls[int(p*float64(len(calls)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.9), "p90-ms")
	b.ReportMetric(at(1), "max-ms")
}
