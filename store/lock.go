package store

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zqagent/sidecar/lockfile"
)

// LockFile is the file in the data directory that one Store at a time holds
// locked: the writer's seq cache assumes no other process writes the file.
// The OS drops the lock when the process dies, even by SIGKILL.
const LockFile = "zqagent.lock"

func acquireLock(dir string) (*lockfile.Lock, error) {
	path := filepath.Join(dir, LockFile)
	l, err := lockfile.Acquire(path)
	if errors.Is(err, lockfile.ErrLocked) {
		return nil, fmt.Errorf("lock %s: %w", path, ErrLocked)
	}
	return l, err
}
