//go:build unix

package conflict

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestWatcherFIFOGitignore: a repository whose .gitignore is a FIFO (no
// writer ever comes) does not block the watcher.
func TestWatcherFIFOGitignore(t *testing.T) {
	dir := realTemp(t)
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	newWatcher(t, dir, WatcherOptions{})
}
