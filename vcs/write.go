package vcs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zqagent/sidecar/atomicfile"
)

// Git modes of the entries a restore writes.
const (
	modeExecutable = "100755"
	modeSymlink    = "120000"
)

// maxLinkTarget bounds a symlink's target read from a snapshot.
const maxLinkTarget = 64 << 10

// writeEntry writes one snapshot entry (size bytes from r) at rel through
// root, which refuses any path that leaves the workspace. A regular file is
// written to a temporary file beside it and renamed over the old one, so a
// symlink in its place is replaced, never followed; a symlink is recreated.
func writeEntry(root *os.Root, c change, r io.Reader, size int64) error {
	rel := filepath.FromSlash(c.path)
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := root.Lstat(rel); err == nil && fi.IsDir() {
		if err := root.Remove(rel); err != nil {
			return fmt.Errorf("a directory is in the way: %w", err)
		}
	}
	if c.mode == modeSymlink {
		if size > maxLinkTarget {
			return fmt.Errorf("symlink target of %d bytes", size)
		}
		target, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return root.Symlink(string(target), rel)
	}
	perm := fs.FileMode(0o644)
	if c.mode == modeExecutable {
		perm = 0o755
	}
	return atomicfile.WriteFunc(root, rel, perm, atomicfile.SetMode, func(w io.Writer) error {
		n, err := io.Copy(w, r)
		if err == nil && n != size {
			err = io.ErrUnexpectedEOF
		}
		return err
	})
}
