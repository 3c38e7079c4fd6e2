package fs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic writes data to rel inside root: it creates the missing parent
// directories, writes a temp file beside rel and renames it over rel, so that
// readers see the old or the new content, never a mix. perm is used for a new
// file; an existing file keeps its mode. Every step goes through root.
func WriteAtomic(root *os.Root, rel string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := root.Stat(rel); err == nil {
		if fi.IsDir() {
			return toolErr(TypeIsDir, ErrIsDir, "%s", rel)
		}
		perm = fi.Mode().Perm()
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+filepath.Base(rel)+".zq-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write temp file: %w", err)
	}
	if err := root.Chmod(tmp, perm); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}
