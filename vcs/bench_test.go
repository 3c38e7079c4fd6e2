package vcs

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkCommitTurn measures CommitTurn on a 1,000-file workspace where
// the turn changed 10 files.
func BenchmarkCommitTurn(b *testing.B) {
	for _, mode := range []Mode{ModeShadow, ModeNative} {
		b.Run(string(mode), func(b *testing.B) {
			ctx := context.Background()
			ws := realTemp(b)
			if mode == ModeNative {
				gitT(b, ws, "init", "-q")
			}
			for i := range 1000 {
				writeT(b, ws, fmt.Sprintf("pkg%02d/file%04d.go", i%50, i), fmt.Sprintf("package pkg\n\n// file %d\n", i))
			}
			s := session(b, ws, mode, "bench")
			if err := s.BeginTurn(ctx); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				b.StopTimer()
				for j := range 10 {
					writeT(b, ws, fmt.Sprintf("pkg%02d/file%04d.go", j%50, j), fmt.Sprintf("package pkg\n\n// edit %d\n", i))
				}
				i++
				b.StartTimer()
				if err := s.CommitTurn(ctx, "completed"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
