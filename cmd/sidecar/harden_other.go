//go:build !linux

package main

import "log/slog"

// hardenProcess: only Linux has PR_SET_DUMPABLE; see harden_linux.go.
func hardenProcess(*slog.Logger) {}
