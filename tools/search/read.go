package search

import (
	"io"
	"path/filepath"

	"github.com/zqagent/sidecar/tools/confine"
)

// relPath turns a walk path ("" for the base) into an os.Root name.
func relPath(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

// readFile reads the regular file rel through the run's root into *buf
// (grown as needed; buf nil only checks that it can be opened). The open
// is confined per path component and never blocks: a FIFO, socket or
// device, even one swapped in after the walk saw a regular file, is
// refused (confine.ErrSpecialFile). A file whose first chunk is binary is
// not read further.
func (r *run) readFile(rel string, buf *[]byte) ([]byte, error) {
	f, fi, err := confine.OpenRead(r.root, relPath(rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil, errSkip
	}
	if buf == nil {
		return nil, nil
	}
	b := *buf
	n := 0
	for {
		if n == len(b) {
			if n >= maxFileSize {
				*buf = b
				return nil, errSkip
			}
			b = append(b, make([]byte, len(b))...)
		}
		k, err := f.Read(b[n:])
		n += k
		if err == io.EOF {
			*buf = b
			return b[:n], nil
		}
		if err != nil {
			*buf = b
			return nil, err
		}
		if n == k && isBinary(b[:n]) { // first chunk
			*buf = b
			return b[:n], nil
		}
	}
}
