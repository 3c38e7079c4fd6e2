// Package atomicfile is the sidecar's one way to replace a file's content:
// the new bytes go to a temporary file in the same directory, which is
// synced, given its mode and renamed over the file, and the directory is
// synced where the OS supports it. Readers (and watchers) see the old
// content or the new one, never a mix; a failure at any step leaves the old
// content and removes the temporary file. A link in the file's place is
// replaced, never followed, and every step goes through an *os.Root, so
// nothing outside it is touched.
//
// Concurrency: the functions hold no state; two writers of one file race
// like two renames do (the last one wins, each whole).
package atomicfile

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrIsDir: a directory is where the file should be.
var ErrIsDir = errors.New("is a directory")

// Mode says what mode the file gets.
type Mode int

const (
	// KeepMode gives a file that already exists its present mode; perm is
	// for a new file.
	KeepMode Mode = iota
	// SetMode gives the file perm even when it exists (a restore, a
	// private file).
	SetMode
)

// Write replaces name (relative to root) with data; see WriteFunc.
func Write(root *os.Root, name string, data []byte, perm fs.FileMode, mode Mode) error {
	return WriteFunc(root, name, perm, mode, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// WriteFile is Write by path: it opens a root on path's directory (created
// when missing, 0o755).
func WriteFile(path string, data []byte, perm fs.FileMode, mode Mode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return Write(root, filepath.Base(path), data, perm, mode)
}

// WriteFunc replaces name (relative to root) with what fill writes: it
// creates the missing parent directories (0o755), fills a fresh temporary
// file beside name, syncs it, sets its mode (perm, or the present file's
// with KeepMode), renames it over name and syncs the directory. On any
// error, fill's included, name keeps its old content and the temporary
// file is removed.
func WriteFunc(root *os.Root, name string, perm fs.FileMode, mode Mode, fill func(io.Writer) error) error {
	name = filepath.Clean(name)
	dir := filepath.Dir(name)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := root.Lstat(name); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: %w", name, ErrIsDir)
	}
	if mode == KeepMode {
		// Through a link inside root the target's mode is kept, as an
		// editor would; the link itself is replaced by the file.
		if fi, err := root.Stat(name); err == nil && fi.Mode().IsRegular() {
			perm = fi.Mode().Perm()
		}
	}
	tmp, err := tempName(name)
	if err != nil {
		return err
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	werr := fill(f)
	// The umask narrowed the mode of the open; Chmod sets it exactly.
	if werr == nil {
		werr = f.Chmod(perm)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	// Best effort: the new content is in place, so a directory that cannot
	// be synced does not make the write an error.
	syncDir(root, dir)
	return nil
}

// tempName is a fresh hidden name beside name.
func tempName(name string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+hex.EncodeToString(b[:])+".tmp"), nil
}
