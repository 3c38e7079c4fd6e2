//go:build !((dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd)

package keychain

import "time"

// checkBus: the keychains of these systems (macOS Keychain, Windows
// Credential Manager) need no session bus.
func checkBus() string { return "" }

// abortCalls: nothing to abort on these systems (their keychain calls
// return on their own).
func abortCalls(time.Duration) {}
