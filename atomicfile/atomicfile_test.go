package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWrite: the content is replaced whole; a failure midway (the writer
// fails after half the bytes) leaves the old content and no temporary
// file; an existing file keeps its mode with KeepMode and gets perm with
// SetMode; a new file gets perm; a link in the file's place is replaced,
// not followed; a directory in the way is an error.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return string(b)
	}
	perm := func(name string) fs.FileMode {
		fi, err := os.Lstat(filepath.Join(dir, name))
		require.NoError(t, err)
		return fi.Mode().Perm()
	}
	onlyFiles := func(want ...string) {
		t.Helper()
		var got []string
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				got = append(got, filepath.ToSlash(rel))
			}
			return err
		}))
		require.ElementsMatch(t, want, got, "a temporary file was left behind")
	}

	// A new file in a new directory gets perm exactly, whatever the umask.
	require.NoError(t, Write(root, "sub/f.txt", []byte("old\n"), 0o640, KeepMode))
	require.Equal(t, "old\n", read("sub/f.txt"))
	unixOnly := runtime.GOOS != "windows"
	if unixOnly {
		require.Equal(t, fs.FileMode(0o640), perm("sub/f.txt"))
	}

	// A failing writer: the old content stays, the temp file is gone.
	boom := errors.New("disk full")
	err = WriteFunc(root, "sub/f.txt", 0o644, KeepMode, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, "old\n", read("sub/f.txt"))
	onlyFiles("sub/f.txt")

	// KeepMode keeps the present mode; SetMode sets perm.
	if unixOnly {
		require.NoError(t, os.Chmod(filepath.Join(dir, "sub/f.txt"), 0o755))
	}
	require.NoError(t, Write(root, "sub/f.txt", []byte("new\n"), 0o600, KeepMode))
	require.Equal(t, "new\n", read("sub/f.txt"))
	if unixOnly {
		require.Equal(t, fs.FileMode(0o755), perm("sub/f.txt"))
	}
	require.NoError(t, Write(root, "sub/f.txt", []byte("newer\n"), 0o600, SetMode))
	require.Equal(t, "newer\n", read("sub/f.txt"))
	if unixOnly {
		require.Equal(t, fs.FileMode(0o600), perm("sub/f.txt"))
	}
	onlyFiles("sub/f.txt")

	// A directory in the way is refused, and left alone.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	require.ErrorIs(t, Write(root, "d", []byte("x"), 0o644, KeepMode), ErrIsDir)
	onlyFiles("sub/f.txt")

	// A link in the file's place is replaced; its target is not written.
	if unixOnly {
		outside := filepath.Join(t.TempDir(), "target")
		require.NoError(t, os.WriteFile(outside, []byte("target\n"), 0o644))
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link")))
		require.NoError(t, Write(root, "link", []byte("file\n"), 0o644, KeepMode))
		fi, err := os.Lstat(filepath.Join(dir, "link"))
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular())
		b, err := os.ReadFile(outside)
		require.NoError(t, err)
		require.Equal(t, "target\n", string(b))
	}

	// By path: the directory is created.
	p := filepath.Join(dir, "by", "path.json")
	require.NoError(t, WriteFile(p, []byte("{}"), 0o600, KeepMode))
	require.Equal(t, "{}", read("by/path.json"))
}
