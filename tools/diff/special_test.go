//go:build unix

package diff

import (
	"errors"
	"syscall"
	"testing"

	"github.com/zqagent/sidecar/confine"
)

// TestPatchFIFO: a patch on a FIFO (no writer: a blocking open would hang
// the test) is refused, and the FIFO stays.
func TestPatchFIFO(t *testing.T) {
	e := newEnv(t)
	if err := syscall.Mkfifo(e.path("pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.patch(t, "*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch")
	if !errors.Is(err, confine.ErrSpecialFile) {
		t.Fatalf("patch on a FIFO: %v", err)
	}
}
