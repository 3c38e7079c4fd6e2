package gitenv

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkCheckLayout: a git directory of 10,240 loose objects (256
// fan-out folders of 40), the walk every Open and every native snapshot
// run pays.
func BenchmarkCheckLayout(b *testing.B) {
	p, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dotgit := filepath.Join(p, ".git")
	for i := range 256 {
		for j := range 40 {
			write(b, filepath.Join(dotgit, "objects", fmt.Sprintf("%02x", i), fmt.Sprintf("%038x", j)), "")
		}
	}
	write(b, filepath.Join(dotgit, "HEAD"), "ref: refs/heads/main\n")
	b.ResetTimer()
	for b.Loop() {
		if err := CheckLayout(context.Background(), p, dotgit); err != nil {
			b.Fatal(err)
		}
	}
}
