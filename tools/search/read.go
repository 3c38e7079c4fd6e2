package search

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/zqagent/sidecar/confine"
)

// dirRef is a directory the walk opened, shared with the workers that read
// its files: each holder has a reference, and the last one closes it.
type dirRef struct {
	f    *os.File
	refs atomic.Int32
}

func newDirRef(f *os.File) *dirRef {
	d := &dirRef{f: f}
	d.refs.Store(1)
	return d
}

func (d *dirRef) acquire() { d.refs.Add(1) }

// release drops a reference; nil is a no-op.
func (d *dirRef) release() {
	if d != nil && d.refs.Add(-1) == 0 {
		d.f.Close()
	}
}

// relPath turns a walk path ("" for the base) into an os.Root name.
func relPath(rel string) string {
	if rel == "" {
		return "."
	}
	return filepath.FromSlash(rel)
}

// joinRel joins a walk path and a name.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// openStart opens the directory where the walk starts, through the root.
func (r *run) openStart(rel string) (*dirRef, error) {
	f, fi, err := confine.OpenRead(r.root, relPath(rel))
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, errSkip
	}
	return newDirRef(f), nil
}

// readFile reads the regular file rel through the run's root into *buf
// (grown as needed; buf nil only checks that it can be opened). The open
// is confined per path component and never blocks: a FIFO, socket or
// device is refused (confine.ErrSpecialFile). A file whose first chunk is
// binary is not read further.
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
	return readAll(f.Read, buf)
}

// readAll reads with read into *buf (grown as needed) until a short read
// or EOF: a short read is the end of a regular file. A file whose first
// chunk is binary is not read further; one over maxFileSize is skipped.
func readAll(read func([]byte) (int, error), buf *[]byte) ([]byte, error) {
	b := *buf
	if len(b) == 0 {
		b = make([]byte, readChunk)
	}
	defer func() { *buf = b }()
	n := 0
	for {
		if n == len(b) {
			if n >= maxFileSize {
				return nil, errSkip
			}
			b = append(b, make([]byte, len(b))...)
		}
		want := len(b) - n
		k, err := read(b[n:])
		n += max(k, 0)
		if err == io.EOF {
			return b[:n], nil
		}
		if err != nil {
			return nil, err
		}
		if k < want || k == 0 {
			return b[:n], nil
		}
		if n == k && isBinary(b[:n]) { // first chunk
			return b[:n], nil
		}
	}
}
