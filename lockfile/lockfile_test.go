package lockfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAcquire: the holder writes its pid; a second Acquire (another open
// file, as another process has) fails at once with a HeldError naming the
// holder's pid; after Release the lock is free again and the file stays.
func TestAcquire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(path)
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	if runtime.GOOS != "windows" { // Windows refuses to read the locked byte
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(os.Getpid()), strings.TrimSpace(string(b)))
	}

	_, err = Acquire(path)
	require.ErrorIs(t, err, ErrLocked)
	var held *HeldError
	require.True(t, errors.As(err, &held))
	require.Equal(t, path, held.Path)
	if runtime.GOOS != "windows" {
		require.Equal(t, os.Getpid(), held.PID)
		require.Contains(t, err.Error(), "(pid "+strconv.Itoa(os.Getpid())+")")
	}

	require.NoError(t, l.Release())
	l2, err := Acquire(path)
	require.NoError(t, err, "the lock is free after Release")
	require.NoError(t, l2.Release())
	require.FileExists(t, path)

	_, err = Acquire(filepath.Join(t.TempDir(), "missing", "x.lock"))
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrLocked, "a lock file that cannot be created is not a held lock")
}
