package terminal

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// pollable returns the PTY master as a non-blocking file in Go's poller.
// creack/pty leaves the master in blocking mode (its ioctls go through
// File.Fd), and a blocking Read is not interrupted by Close: a process that
// left the terminal's session but still holds its slave side would keep the
// reader, and so Close, waiting forever. The copy is close-on-exec, so later
// children do not inherit it.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	var fd int
	var derr error
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(old uintptr) { fd, derr = unix.FcntlInt(old, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, fmt.Errorf("dup pty: %w", derr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("pty non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
