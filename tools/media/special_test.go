//go:build unix

package media

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zqagent/sidecar/confine"
)

// TestMediaFIFO: media and stored attachments refuse a FIFO (no writer:
// a blocking open would hang the test) with a clear error.
func TestMediaFIFO(t *testing.T) {
	f := newFixture(t, Options{})
	if err := syscall.Mkfifo(filepath.Join(f.root, "cam.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.call(t, map[string]any{"path": "cam.png"})
	wantType(t, err, "special_file")
	if !errors.Is(err, confine.ErrSpecialFile) || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("media on a FIFO: %v", err)
	}

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, AttachmentDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, AttachmentDir, "1-0-a.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = ReadStoredAttachment(dir, AttachmentDir+"/1-0-a.png")
	if !errors.Is(err, ErrAttachment) || !errors.Is(err, confine.ErrSpecialFile) {
		t.Fatalf("stored attachment FIFO: %v", err)
	}
}
