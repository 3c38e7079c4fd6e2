package conflict

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestCheckWriteStopsOnCancel: the hash a check falls back to stops with
// the turn's cancel instead of reading the whole file.
func TestCheckWriteStopsOnCancel(t *testing.T) {
	p := filepath.Join(realTemp(t), "a.txt")
	writeFile(t, p, "one\n")
	g := NewGuard(nil)
	readAs(t, g, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.CheckWriteContext(ctx, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if err := g.CheckWriteContext(context.Background(), p); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
}
