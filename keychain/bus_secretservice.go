//go:build (dragonfly && cgo) || (freebsd && cgo) || linux || netbsd || openbsd

package keychain

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"
)

// On these systems go-keyring talks to the Secret Service over the D-Bus
// session bus, through godbus's dbus.SessionBus. When godbus finds no bus
// address it runs dbus-launch, which starts a dbus-daemon — and, by D-Bus
// activation, a gnome-keyring-daemon — that outlive the sidecar: one more
// pair on every start of a headless machine. So before every keychain call
// the address is settled here and godbus never autolaunches.

// sessionBusEnv is the variable godbus reads first.
const sessionBusEnv = "DBUS_SESSION_BUS_ADDRESS"

// checkBus returns why no session bus can be reached without starting
// one ("" when one can). A bus found in a well-known place is written to
// DBUS_SESSION_BUS_ADDRESS, as godbus would do itself, so that godbus uses
// exactly that address.
func checkBus() string {
	if a := os.Getenv(sessionBusEnv); a != "" && a != "autolaunch:" {
		return "" // an explicit address: godbus dials it, it never launches
	}
	addr := discoverBus(os.Getenv("XDG_RUNTIME_DIR"), fmt.Sprintf("/run/user/%d", os.Getuid()))
	if addr == "" {
		return "no D-Bus session bus: " + sessionBusEnv + " is unset and there is no $XDG_RUNTIME_DIR/bus " +
			"(a headless machine; the sidecar never starts a bus of its own)"
	}
	os.Setenv(sessionBusEnv, addr)
	return ""
}

// discoverBus finds a running session bus the way the D-Bus tools do:
// the socket $XDG_RUNTIME_DIR/bus, else godbus's places under
// /run/user/<uid> (the socket "bus", or the file "dbus-session" holding
// the address). "" when there is none.
func discoverBus(runtimeDir, runUser string) string {
	for _, dir := range []string{runtimeDir, runUser} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "bus")
		if fi, err := os.Stat(p); err == nil && fi.Mode().Type() == os.ModeSocket {
			return "unix:path=" + dbus.EscapeBusAddressValue(p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(runUser, "dbus-session")); err == nil {
		if a, ok := strings.CutPrefix(string(b), sessionBusEnv+"="); ok {
			if a = strings.TrimSpace(a); a != "" && a != "autolaunch:" {
				return a
			}
		}
	}
	return ""
}

// abortCalls closes the process's shared session bus connection (the one
// go-keyring uses), which fails every call still waiting on it; the next
// keychain call connects again. It waits at most d (the bus may itself be
// the thing that hangs).
func abortCalls(d time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if conn, err := dbus.SessionBus(); err == nil {
			_ = conn.Close()
		}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
