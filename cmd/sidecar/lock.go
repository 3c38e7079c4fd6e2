package main

import (
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/lockfile"
)

// errLocked: another sidecar holds the data directory.
var errLocked = errors.New("another sidecar is already running on this data directory")

// lockName is the data dir's lock file of the sidecar process (the store
// takes its own, store.LockFile, once this one is held).
const lockName = "sidecar.lock"

// fileLock is the held lock file (package lockfile: the OS releases it
// when the process dies, so a crash never leaves it stale).
type fileLock struct {
	l *lockfile.Lock
}

// acquireLock takes the lock or fails at once with errLocked (naming the
// holder's pid when it wrote one).
func acquireLock(path string) (*fileLock, error) {
	l, err := lockfile.Acquire(path)
	var held *lockfile.HeldError
	switch {
	case errors.As(err, &held) && held.PID > 0:
		return nil, fmt.Errorf("%w (pid %d holds %s)", errLocked, held.PID, path)
	case held != nil:
		return nil, fmt.Errorf("%w (%s is locked)", errLocked, path)
	case err != nil:
		return nil, err
	}
	return &fileLock{l: l}, nil
}

func (l *fileLock) release() { _ = l.l.Release() }
