package keychain

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/zalando/go-keyring"
)

// Sentinels. Errors from this package never contain a key.
var (
	// ErrUnavailable: the OS keychain cannot be used (no Secret Service on
	// the session bus, no session bus, a locked keychain, an unsupported
	// system). The wrapped message names the cause and the remedy.
	ErrUnavailable = errors.New("OS keychain not available")
	// ErrNoAnswer: the keychain did not answer within LookupTimeout (on
	// Linux, a Secret Service waiting on an unlock prompt nobody answers).
	// Errors that wrap it also wrap ErrUnavailable.
	ErrNoAnswer = errors.New("the OS keychain did not answer")
	// ErrNotFound: no key is stored (or set in the environment) for the provider.
	ErrNotFound = errors.New("no API key configured")
	// ErrInvalidKey: the key is empty, has control characters or surrounding
	// whitespace, is not UTF-8, or is too large for the keychain backends.
	ErrInvalidKey = errors.New("invalid API key")
	// ErrInvalidProvider: the provider profile name cannot be a keychain account.
	ErrInvalidProvider = errors.New("invalid provider name")
)

// unavailable wraps ErrUnavailable with the cause and the remedy for provider.
func unavailable(provider, cause string) error {
	return fmt.Errorf("%w: %s; %s", ErrUnavailable, cause, remedy(provider))
}

// remedy says how to get a key to the engine when the keychain is not usable.
func remedy(provider string) string {
	env := EnvVar(provider)
	switch runtime.GOOS {
	case "darwin":
		return "set " + env + ", or unlock the login keychain (Keychain Access)"
	case "windows":
		return "set " + env + ", or check the Windows Credential Manager"
	}
	return "set " + env + ", or start/unlock the keychain (gnome-keyring / KWallet)"
}

// mapErr turns a go-keyring error into this package's sentinels. Everything
// that is not "not found" or "too big" means the keychain cannot be used.
func mapErr(provider string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return fmt.Errorf("%w for %s", ErrNotFound, provider)
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return fmt.Errorf("%w: too large for the keychain", ErrInvalidKey)
	case errors.Is(err, keyring.ErrUnsupportedPlatform):
		return unavailable(provider, "no supported keychain on "+runtime.GOOS)
	}
	return unavailable(provider, cause(err))
}

// cause describes a backend error in words a user can act on; the raw
// message follows for support.
func cause(err error) string {
	msg := err.Error()
	l := strings.ToLower(msg)
	switch {
	case strings.Contains(msg, "org.freedesktop.DBus.Error.ServiceUnknown"),
		strings.Contains(l, "was not provided by any .service files"):
		return "no Secret Service is running on the D-Bus session bus (" + msg + ")"
	case strings.Contains(l, "dbus_session_bus_address"), strings.Contains(l, "no such file or directory"),
		strings.Contains(l, "connection refused"), strings.Contains(l, "dial unix"),
		strings.Contains(l, "x11"), strings.Contains(l, "dbus-launch"), strings.Contains(l, "autolaunch"):
		return "no D-Bus session bus is reachable (" + msg + ")"
	case strings.Contains(l, "unlock"), strings.Contains(l, "locked"), strings.Contains(l, "dismissed"),
		strings.Contains(l, "prompt"), strings.Contains(l, "object does not exist"):
		return "the keychain is locked or has no default collection (" + msg + ")"
	case strings.Contains(msg, "org.freedesktop.DBus.Error.NoReply"), strings.Contains(l, "timeout"):
		return "the keychain did not answer (" + msg + ")"
	case strings.Contains(l, "user interaction is not allowed"), strings.Contains(l, "-25308"):
		return "the keychain is locked (" + msg + ")"
	}
	return "keychain error (" + msg + ")"
}
