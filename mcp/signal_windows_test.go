//go:build windows

package mcp

import "os"

var syscallZero = os.Interrupt
