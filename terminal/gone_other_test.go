//go:build !linux && !windows

package terminal

import "syscall"

func gone(pid int) bool { return syscall.Kill(pid, 0) != nil }
