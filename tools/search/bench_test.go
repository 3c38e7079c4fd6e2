package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/confine"
)

// benchPatterns are the patterns compared with ripgrep (see bench_rg.sh).
var benchPatterns = []struct{ name, pattern string }{
	{"literal", `func main`},
	{"regex", `errors\.New\("[a-z]+`},
	{"ignorecase", `(?i)deadline exceeded`},
}

// BenchmarkGrepGoroot searches the Go standard library source, all matches
// (no result cap), as `rg -c PATTERN $(go env GOROOT)/src` does. Besides
// wall time it reports the process's CPU time (user+sys) per search, which a
// loaded machine disturbs less; bench_rg.sh prints both for rg.
func BenchmarkGrepGoroot(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	ws, err := confine.New(filepath.Join(strings.TrimSpace(string(out)), "src"))
	if err != nil {
		b.Skip("no GOROOT/src:", err)
	}
	for _, p := range benchPatterns {
		b.Run(p.name, func(b *testing.B) {
			var res *Result
			cpu0 := cpuTime()
			for b.Loop() {
				res, err = Grep(context.Background(), ws, Query{Pattern: p.pattern, MaxResults: MaxMaxResults * 1000})
				if err != nil {
					b.Fatal(err)
				}
			}
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			}
			b.ReportMetric(float64(res.Matches), "matches")
			b.ReportMetric(float64(res.Searched), "files")
		})
	}
}
