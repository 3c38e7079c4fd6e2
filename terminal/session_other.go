//go:build !linux && !windows

package terminal

import "syscall"

// sessionMembers is empty where the OS gives no cheap way to list a session:
// signals then reach the terminal's process group only.
func sessionMembers(int) []int { return nil }

// Foreground is unknown here.
func (p *unixPTY) Foreground() string { return "" }

// sessionAlive reports whether the terminal's process group has a process
// left.
func sessionAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
