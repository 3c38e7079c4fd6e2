package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// errLocked: another sidecar holds the data directory.
var errLocked = errors.New("another sidecar is already running on this data directory")

// fileLock is an exclusive OS lock on a file in the data directory; the OS
// releases it when the process dies, so a crash never leaves it stale.
type fileLock struct {
	f *os.File
}

// acquireLock takes the lock or fails at once with errLocked (naming the
// holder's pid when it wrote one).
func acquireLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := strings.TrimSpace(string(b[:n]))
		if _, perr := strconv.Atoi(holder); perr == nil {
			return nil, fmt.Errorf("%w (pid %s holds %s)", errLocked, holder, path)
		}
		return nil, fmt.Errorf("%w (%s is locked: %v)", errLocked, path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0) // informative only
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) release() {
	_ = unlockFile(l.f) // closing releases it anyway
	l.f.Close()
}
