package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrSpecialFile: the path is a FIFO, a socket or a device. The file tools
// never open one for reading: a FIFO blocks the open (or the read) until
// someone writes, and a device may be endless or have side effects.
var ErrSpecialFile = errors.New("not a regular file")

// SpecialKind names a special file's type ("named pipe (FIFO)", "socket",
// "device"), "" for regular files, directories and symlinks.
func SpecialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "device"
	case m&fs.ModeIrregular != 0:
		return "special file"
	}
	return ""
}

// OpenRead opens name under root for reading, refusing special files
// without ever blocking: the type is checked with Lstat first, and the open
// itself is non-blocking (a FIFO swapped in after the check does not wait
// for a writer) and checked again with fstat. The file is a regular file or
// a directory; the caller decides about directories. A refusal wraps
// ErrSpecialFile and names the type; os errors come back as they are.
func OpenRead(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	if fi, err := root.Lstat(name); err == nil {
		if err := checkSpecial(name, fi); err != nil {
			return nil, nil, err
		}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkSpecial(name, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenReadPath is OpenRead for a path outside any root (the caller has
// confined it already): non-blocking, special files refused.
func OpenReadPath(p string) (*os.File, fs.FileInfo, error) {
	if fi, err := os.Lstat(p); err == nil {
		if err := checkSpecial(p, fi); err != nil {
			return nil, nil, err
		}
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkSpecial(p, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadRegularPath is ReadRegular for a path outside any root.
func ReadRegularPath(p string, limit int64) ([]byte, error) {
	f, fi, err := OpenReadPath(p)
	if err != nil {
		return nil, err
	}
	return readAll(f, fi, p, limit)
}

// ReadRegular reads a whole regular file under root, refusing special
// files as OpenRead does, directories, and files longer than limit.
func ReadRegular(root *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := OpenRead(root, name)
	if err != nil {
		return nil, err
	}
	return readAll(f, fi, name, limit)
}

// readAll reads f (and closes it) up to limit; a directory is an error.
func readAll(f *os.File, fi fs.FileInfo, name string, limit int64) ([]byte, error) {
	defer f.Close()
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes", name, limit)
	}
	return b, nil
}

func checkSpecial(name string, fi fs.FileInfo) error {
	if kind := SpecialKind(fi.Mode()); kind != "" {
		return fmt.Errorf("%w: %s is a %s", ErrSpecialFile, name, kind)
	}
	return nil
}
