//go:build !((dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd)

package keychain

// checkBus: the keychains of these systems (macOS Keychain, Windows
// Credential Manager) need no session bus.
func checkBus() string { return "" }
