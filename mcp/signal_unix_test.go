//go:build !windows

package mcp

import "syscall"

var syscallZero = syscall.Signal(0)
