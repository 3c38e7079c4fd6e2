package vcs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
	tmp, err := tempName(rel)
	if err != nil {
		return err
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	n, werr := io.Copy(f, r)
	cerr := f.Close()
	if werr == nil && n != size {
		werr = io.ErrUnexpectedEOF
	}
	if err := errors.Join(werr, cerr); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// tempName is a fresh hidden name beside rel.
func tempName(rel string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(rel), ".zqagent-restore-"+hex.EncodeToString(b[:])), nil
}
