package store

import (
	"fmt"
	"os"
	"path/filepath"
)

// LockFile is the file in the data directory that one Store at a time holds
// locked: the writer's seq cache assumes no other process writes the file.
// The OS drops the lock when the process dies, even by SIGKILL.
const LockFile = "zqagent.lock"

func acquireLock(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if err == errLockHeld {
			return nil, fmt.Errorf("lock %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
