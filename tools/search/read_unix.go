//go:build unix

package search

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// openat opens name, one component, relative to the open directory d:
// never following a link (O_NOFOLLOW) and never blocking (O_NONBLOCK).
func openat(d *dirRef, name string, flags int) (int, error) {
	rc, err := d.f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, oerr := -1, error(nil)
	if err := rc.Control(func(dfd uintptr) {
		for {
			fd, oerr = unix.Openat(int(dfd), name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if oerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return -1, err
	}
	return fd, oerr
}

// openDirAt opens the subdirectory name of d (at rel).
func (r *run) openDirAt(d *dirRef, _ string, name string) (*dirRef, error) {
	fd, err := openat(d, name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return newDirRef(os.NewFile(uintptr(fd), name)), nil
}

// readAt reads the regular file name of d (at rel) into *buf (nil: a
// buffer of its own) with plain system calls: no poller registration, no
// finalizer. A FIFO, socket or device, even one swapped in after the walk
// saw a regular file, is skipped without blocking.
func (r *run) readAt(d *dirRef, _ string, name string, buf *[]byte) ([]byte, error) {
	fd, err := openat(d, name, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errSkip
	}
	if buf == nil {
		buf = new([]byte)
	}
	return readAll(func(p []byte) (int, error) {
		for {
			n, err := unix.Read(fd, p)
			if err != unix.EINTR {
				return n, err
			}
		}
	}, buf)
}

// ignoreOpener opens the ignore files of the open directory d (at rel),
// one name relative to d, never following a link, never blocking, regular
// files only.
func (r *run) ignoreOpener(d *dirRef, _ string) ignore.Opener {
	return func(name string) (io.ReadCloser, error) {
		fd, err := openat(d, name, unix.O_RDONLY)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return nil, errSkip
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}
