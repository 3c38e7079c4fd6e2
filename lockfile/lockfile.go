// Package lockfile is the sidecar's one lock file: an exclusive OS lock
// (flock on Unix, LockFileEx on Windows) on a file that holds the pid of
// its holder. The OS drops the lock when the process dies, even by
// SIGKILL, so a crash never leaves a stale lock: the file may stay, but a
// new holder locks and rewrites it. Acquire never waits; a lock held by
// another process is a *HeldError (errors.Is ErrLocked) naming the holder's
// pid when it could be read.
//
// The data directory has two such files (ui-protocol.md, Data directory
// files): sidecar.lock (one sidecar per data directory, cmd/sidecar) and
// zqagent.lock (the store's single writer, package store).
//
// Concurrency: a Lock is released once, by its owner. Two Acquire calls
// of one file in one process also exclude each other (flock and LockFileEx
// lock per open file).
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrLocked: another process (or another Lock of this one) holds the file.
var ErrLocked = errors.New("locked by another process")

// HeldError is Acquire's error for a lock that is held.
type HeldError struct {
	Path string
	PID  int // the holder's, as it wrote it; 0 when unknown
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s: %v (pid %d)", e.Path, ErrLocked, e.PID)
	}
	return fmt.Sprintf("%s: %v", e.Path, ErrLocked)
}

// Unwrap makes errors.Is(err, ErrLocked) hold.
func (e *HeldError) Unwrap() error { return ErrLocked }

// Lock is a held lock file.
type Lock struct {
	f *os.File
}

// Acquire creates path (0o600) when missing, locks it exclusively without
// waiting and writes this process's pid in it (informative only).
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	held, err := tryLock(f)
	if err != nil || held {
		pid := 0
		if held {
			pid = readPID(f)
		}
		f.Close()
		if held {
			return nil, &HeldError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// readPID is the pid the holder wrote in f; 0 when it cannot be read
// (Windows refuses to read the locked byte).
func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Release unlocks and closes the file (which stays on disk: removing it
// would let a process that opened it before the removal lock a file
// nobody else sees).
func (l *Lock) Release() error {
	return errors.Join(unlock(l.f), l.f.Close())
}
