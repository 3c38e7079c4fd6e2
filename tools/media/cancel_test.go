package media

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

// TestMediaStopsOnCancel: a read of a workspace file under a cancelled
// turn returns the cancel instead of reading on.
func TestMediaStopsOnCancel(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(t, "shot.png", pngData(1<<20))
	spec, _ := f.reg.Lookup("media")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	raw, _ := json.Marshal(map[string]any{"path": "shot.png"})
	_, err := spec.Handler(ctx, tools.Call{ID: "c1", Name: "media", Args: raw})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n, _ := f.tool.Used(); n != 0 {
		t.Errorf("Used = %d after a cancelled read", n)
	}
}
