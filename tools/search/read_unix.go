//go:build unix

package search

import (
	"syscall"
)

// readFile reads the regular file at p into buf (grown as needed) with plain
// system calls: no poller registration, no finalizer, and O_NOFOLLOW so that
// a file swapped for a symlink after the walk saw it is not followed. A
// short read is the end of a regular file. A file whose first chunk is
// binary is not read further.
func readFile(p string, buf []byte) (data, newBuf []byte, err error) {
	fd, err := open(p)
	if err != nil {
		return nil, buf, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			if n >= maxFileSize {
				return nil, buf, errSkip
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		want := len(buf) - n
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, err
		}
		n += k
		if k < want || k == 0 {
			return buf[:n], buf, nil
		}
		if n == k && isBinary(buf[:n]) { // first chunk
			return buf[:n], buf, nil
		}
	}
}

func open(p string) (int, error) {
	for {
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
